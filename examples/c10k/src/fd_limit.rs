//! Making room for the sockets: `RLIMIT_NOFILE`.
//!
//! Every socket is a file descriptor, and a process may have only so many
//! open: the soft limit, which the process may raise up to the hard limit,
//! which only a process with CAP_SYS_RESOURCE may raise (root has it,
//! except in containers that take it away).
//! Many systems start programs with a soft limit of 1,024, far short of
//! ten thousand connections.

use rlimit::Resource;

use crate::grouped;

/// Descriptors besides the sockets: stdio, the selector, its waker, the
/// listener, the pipes to the server process, and a few to spare.
pub const SPARE: u64 = 64;

/// What we could arrange, and what to tell the reader about it.
pub struct Budget {
    /// How many connections fit.
    pub connections: u64,
    pub report: Vec<String>,
}

// ANCHOR: make_room
/// Raises `RLIMIT_NOFILE` so that `wanted` connections fit: each of the
/// two processes holds one end of every connection. The server process
/// inherits the limit. If the hard limit is too low and may not be raised,
/// uses all it allows and says how many connections fit.
pub fn make_room(wanted: u64) -> Budget {
    let need = wanted + SPARE;
    let mut report = vec![format!(
        "open files: each process holds one end of every connection, so {} connections \
         need {} descriptors with {SPARE} spare",
        grouped(wanted),
        grouped(need)
    )];
    let (soft, hard) = match Resource::NOFILE.get() {
        Ok(limits) => limits,
        Err(e) => {
            report.push(format!(
                "open files: cannot read the limit ({e}); trying anyway"
            ));
            return Budget {
                connections: wanted,
                report,
            };
        }
    };
    if soft >= need {
        report.push(format!(
            "open files: the limit of {} is enough",
            grouped(soft)
        ));
        return Budget {
            connections: wanted,
            report,
        };
    }
    if hard >= need {
        return match Resource::NOFILE.set(need, hard) {
            Ok(()) => {
                report.push(format!(
                    "open files: raised the limit from {} to {} (the hard limit is {})",
                    grouped(soft),
                    grouped(need),
                    grouped(hard)
                ));
                Budget {
                    connections: wanted,
                    report,
                }
            }
            Err(e) => fall_back(soft, soft, hard, &e.to_string(), report),
        };
    }
    // The hard limit itself is too low: only a privileged process may raise it.
    match Resource::NOFILE.set(need, need) {
        Ok(()) => {
            report.push(format!(
                "open files: raised the limit from {} and the hard limit from {} to {} \
                 (this process has CAP_SYS_RESOURCE, which allows that)",
                grouped(soft),
                grouped(hard),
                grouped(need)
            ));
            Budget {
                connections: wanted,
                report,
            }
        }
        Err(e) => {
            // Raising the soft limit up to the hard one is always allowed.
            let usable = match Resource::NOFILE.set(hard, hard) {
                Ok(()) => hard,
                Err(_) => soft,
            };
            fall_back(soft, usable, hard, &e.to_string(), report)
        }
    }
}
// ANCHOR_END: make_room

/// Explains why the limit could not be raised far enough, and how far the
/// descriptors we have go.
fn fall_back(soft: u64, usable: u64, hard: u64, error: &str, mut report: Vec<String>) -> Budget {
    let connections = usable.saturating_sub(SPARE);
    report.push(format!(
        "open files: the limit is {} and the hard limit {}; raising the hard limit needs \
         CAP_SYS_RESOURCE, which root normally has, and this process does not ({error})",
        grouped(soft),
        grouped(hard)
    ));
    report.push(
        "open files: to allow more, raise the hard limit where it is set: `ulimit -Hn 30000` \
         in a root shell that then starts this program, a `nofile` line in \
         /etc/security/limits.conf, LimitNOFILE= in a systemd unit, or `--ulimit nofile=` \
         for a container"
            .to_string(),
    );
    report.push(format!(
        "open files: using {} descriptors, room for {} connections",
        grouped(usable),
        grouped(connections)
    ));
    Budget {
        connections,
        report,
    }
}
