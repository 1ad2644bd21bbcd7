//! Mutexes that outlive a panic. A thread that panics while holding a `std::sync::Mutex` poisons
//! it. What this crate's locks guard (counters, maps, a temp file) is at worst left with one
//! update half made, which later calls tolerate; failing every later call instead would turn one
//! bad request into a dead server. So a poisoned lock is taken as it is. Owns only that rule; it
//! must never hold or decide anything about what a lock guards.

use std::sync::{Mutex, MutexGuard};

/// A `Mutex` taken whether or not an earlier holder panicked.
pub trait Unpoisoned<T> {
    /// Locks, taking the guard of a poisoned lock as it is.
    fn locked(&self) -> MutexGuard<'_, T>;
    /// The value, even when the lock was poisoned.
    fn into_unpoisoned(self) -> T;
}

impl<T> Unpoisoned<T> for Mutex<T> {
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn into_unpoisoned(self) -> T {
        self.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_poisoned_by_a_panic_is_still_taken() {
        let m = std::sync::Arc::new(Mutex::new(1));
        let held = m.clone();
        let _ = std::thread::spawn(move || {
            let _guard = held.lock().unwrap();
            panic!("poisons the lock");
        })
        .join();
        assert!(m.is_poisoned());
        *m.locked() += 1;
        assert_eq!(*m.locked(), 2);
        let m = std::sync::Arc::try_unwrap(m).expect("one owner left");
        assert_eq!(m.into_unpoisoned(), 2);
    }
}
