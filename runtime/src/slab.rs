//! The executor's task table: a slab.
//!
//! The executor finds a task for every poll, so the table's lookup is on
//! the hottest path of the runtime. A slab is a `Vec` whose entries each
//! hold a task or are vacant, where the vacant entries form a list (each
//! names the next), so that a new task takes the place the last finished
//! one left, and the `Vec` grows only when no place is free. A task keeps
//! its place (its slot) for as long as it lives, so its waker carries the
//! slot, and finding the task is indexing a `Vec`: no hashing, no probing.
//! (This is what the `slab` crate does, and what tokio and mio used to keep
//! their tasks and sockets in.)
//!
//! Slots are reused; task ids are not. So an entry keeps its task's id, and
//! a lookup checks it: a wake for a task that has finished, whose slot may
//! hold another task by now, finds nothing, rather than polling a stranger.

use crate::task_id::TaskId;
use crate::waker::TaskRef;

/// Values (the executor's tasks) kept by slot, each with its task's id.
pub(crate) struct Slab<T> {
    entries: Vec<Entry<T>>,
    /// The first vacant entry, or `entries.len()` when there is none: the
    /// slot the next insert takes.
    next_vacant: usize,
}

enum Entry<T> {
    Occupied(TaskId, T),
    /// A free place; holds the next free slot (or `entries.len()`).
    Vacant(usize),
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            entries: Vec::new(),
            next_vacant: 0,
        }
    }
}

impl<T> Slab<T> {
    /// The place task `id` will take: its [`TaskRef`] is known before the
    /// task is made (its waker needs it), and the task goes in with
    /// [`VacantEntry::insert`].
    pub(crate) fn vacant_entry(&mut self, id: TaskId) -> VacantEntry<'_, T> {
        let slot = self.next_vacant;
        VacantEntry {
            task: TaskRef { id, slot },
            slab: self,
        }
    }

    /// The value of `task`, if it is still in the table.
    #[inline]
    pub(crate) fn get(&self, task: TaskRef) -> Option<&T> {
        match self.entries.get(task.slot) {
            Some(Entry::Occupied(id, value)) if *id == task.id => Some(value),
            _ => None,
        }
    }

    /// Takes `task` out of the table, and frees its slot for the next
    /// insert.
    pub(crate) fn remove(&mut self, task: TaskRef) -> Option<T> {
        self.get(task)?;
        let freed = Entry::Vacant(self.next_vacant);
        let Entry::Occupied(_, value) = std::mem::replace(&mut self.entries[task.slot], freed)
        else {
            unreachable!("`get` just found the task there");
        };
        self.next_vacant = task.slot;
        Some(value)
    }

    /// Every value with its id, in slot order (not id order).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (TaskId, &T)> {
        self.entries.iter().filter_map(|entry| match entry {
            Entry::Occupied(id, value) => Some((*id, value)),
            Entry::Vacant(_) => None,
        })
    }

    /// Empties the table, returning every value with its id.
    pub(crate) fn drain(&mut self) -> Vec<(TaskId, T)> {
        let entries = std::mem::take(&mut self.entries);
        *self = Slab::default();
        entries
            .into_iter()
            .filter_map(|entry| match entry {
                Entry::Occupied(id, value) => Some((id, value)),
                Entry::Vacant(_) => None,
            })
            .collect()
    }
}

/// A place in a [`Slab`] set aside for one task: see
/// [`Slab::vacant_entry`].
pub(crate) struct VacantEntry<'a, T> {
    slab: &'a mut Slab<T>,
    task: TaskRef,
}

impl<T> VacantEntry<'_, T> {
    /// Where the task will be.
    pub(crate) fn task(&self) -> TaskRef {
        self.task
    }

    /// Puts the task's value in its place.
    pub(crate) fn insert(self, value: T) {
        let slab = self.slab;
        let entry = Entry::Occupied(self.task.id, value);
        match slab.entries.get_mut(self.task.slot) {
            Some(place) => {
                let Entry::Vacant(next) = std::mem::replace(place, entry) else {
                    unreachable!("the list of free slots leads only to vacant entries");
                };
                slab.next_vacant = next;
            }
            None => {
                slab.entries.push(entry);
                slab.next_vacant = slab.entries.len();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insert(slab: &mut Slab<&'static str>, id: TaskId, value: &'static str) -> TaskRef {
        let entry = slab.vacant_entry(id);
        let task = entry.task();
        entry.insert(value);
        task
    }

    #[test]
    fn a_freed_slot_is_taken_again_and_old_refs_find_nothing() {
        let mut slab = Slab::default();
        let a = insert(&mut slab, 1, "a");
        let b = insert(&mut slab, 2, "b");
        let c = insert(&mut slab, 3, "c");
        assert_eq!((a.slot, b.slot, c.slot), (0, 1, 2));
        assert_eq!(slab.remove(b), Some("b"));
        assert_eq!(slab.remove(a), Some("a"));
        assert_eq!(slab.remove(a), None);
        // The last slot freed is the first taken.
        let d = insert(&mut slab, 4, "d");
        let e = insert(&mut slab, 5, "e");
        let f = insert(&mut slab, 6, "f");
        assert_eq!((d.slot, e.slot, f.slot), (0, 1, 3));
        // A wake for task 1 or 2 names a slot that now holds another task.
        assert_eq!(slab.get(a), None);
        assert_eq!(slab.get(b), None);
        assert_eq!(slab.remove(b), None);
        assert_eq!(slab.get(e), Some(&"e"));
        let mut all: Vec<_> = slab.iter().collect();
        all.sort();
        assert_eq!(all, [(3, &"c"), (4, &"d"), (5, &"e"), (6, &"f")]);
        let mut drained = slab.drain();
        drained.sort();
        assert_eq!(drained, [(3, "c"), (4, "d"), (5, "e"), (6, "f")]);
        assert_eq!(slab.iter().count(), 0);
        assert_eq!(insert(&mut slab, 7, "g").slot, 0);
    }

    #[test]
    fn a_slot_past_the_end_finds_nothing() {
        let mut slab: Slab<&str> = Slab::default();
        let nowhere = TaskRef { id: 9, slot: 5 };
        assert_eq!(slab.get(nowhere), None);
        assert_eq!(slab.remove(nowhere), None);
    }
}
