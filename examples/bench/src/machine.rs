//! What the numbers were measured on. A benchmark result without its machine
//! is not a result.

use std::fmt;
use std::path::Path;
use std::process::Command;

/// The machine and toolchain of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// The CPU model from /proc/cpuinfo.
    pub cpu: String,
    /// Cores this process may run on.
    pub cores: usize,
    /// The kernel release (`uname -r`).
    pub kernel: String,
    /// `rustc --version`, if rustc is on the PATH.
    pub rustc: Option<String>,
}

impl Machine {
    /// Looks at the machine we are running on.
    pub fn current() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
        let rustc = Command::new("rustc")
            .arg("--version")
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string());
        Machine {
            cpu: cpu_model(&cpuinfo).unwrap_or_else(|| "unknown CPU".into()),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            kernel,
            rustc,
        }
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, {} cores, Linux {}",
            self.cpu, self.cores, self.kernel
        )?;
        if let Some(rustc) = &self.rustc {
            write!(f, ", {rustc}")?;
        }
        Ok(())
    }
}

/// The commit the numbers were measured on, short, with a note if the
/// work tree had changes.
pub fn git_commit(root: &Path) -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short", "HEAD"]) {
        Some(commit) => match git(&["status", "--porcelain", "--untracked-files=no"]) {
            Some(changes) if !changes.is_empty() => format!("{commit} with uncommitted changes"),
            _ => commit,
        },
        None => "unknown".into(),
    }
}

/// The first `model name` in the text of /proc/cpuinfo.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == "model name").then(|| value.trim().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_name_is_the_first_one() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n\
                       \nprocessor\t: 1\nmodel name\t: other\n";
        assert_eq!(cpu_model(cpuinfo).as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(cpu_model("processor : 0\n"), None);
    }

    #[test]
    fn display_names_cpu_cores_and_kernel() {
        let m = Machine {
            cpu: "X".into(),
            cores: 2,
            kernel: "6.1".into(),
            rustc: None,
        };
        assert_eq!(m.to_string(), "X, 2 cores, Linux 6.1");
    }
}
