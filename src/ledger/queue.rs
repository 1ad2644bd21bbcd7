//! A bounded lock-free queue of `Copy` records (Dmitry Vyukov's bounded MPMC ring): the call path
//! hands the ledger writer a fixed-size record with one compare-and-swap and two atomic stores, no
//! allocation, no lock, no syscall. A full queue refuses the record instead of waiting.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Slot<T> {
    /// `pos` when free for the push at `pos`, `pos + 1` when holding the value pushed at `pos`.
    seq: AtomicUsize,
    /// The value, initialised while `seq` says the slot holds one.
    val: UnsafeCell<MaybeUninit<T>>,
}

/// The ring; its capacity is a power of two.
pub(crate) struct Ring<T: Copy> {
    /// The slots.
    slots: Box<[Slot<T>]>,
    /// Capacity less one: a position's slot is `pos & mask`.
    mask: usize,
    /// Next push position (kept apart from `tail` so pushes and pops do not share a cache line).
    head: Padded,
    /// Next pop position.
    tail: Padded,
}

#[repr(align(128))]
struct Padded(AtomicUsize);

// Values are moved in and out whole, each slot owned by one side at a time (its `seq` says which).
unsafe impl<T: Copy + Send> Send for Ring<T> {}
unsafe impl<T: Copy + Send> Sync for Ring<T> {}

impl<T: Copy> Ring<T> {
    /// A ring of `capacity` slots (rounded up to a power of two, at least 2).
    pub(crate) fn new(capacity: usize) -> Ring<T> {
        let cap = capacity.max(2).next_power_of_two();
        Ring {
            slots: (0..cap)
                .map(|i| Slot {
                    seq: AtomicUsize::new(i),
                    val: UnsafeCell::new(MaybeUninit::uninit()),
                })
                .collect(),
            mask: cap - 1,
            head: Padded(AtomicUsize::new(0)),
            tail: Padded(AtomicUsize::new(0)),
        }
    }

    /// Adds `v`; gives it back when the ring is full.
    pub(crate) fn push(&self, v: T) -> Result<(), T> {
        let mut pos = self.head.0.load(Ordering::Relaxed);
        loop {
            let slot = &self.slots[pos & self.mask];
            let seq = slot.seq.load(Ordering::Acquire);
            let dif = seq.wrapping_sub(pos) as isize;
            if dif == 0 {
                match self.head.0.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        // SAFETY: the CAS made this slot ours until `seq` is published.
                        unsafe { (*slot.val.get()).write(v) };
                        slot.seq.store(pos.wrapping_add(1), Ordering::Release);
                        return Ok(());
                    }
                    Err(now) => pos = now,
                }
            } else if dif < 0 {
                return Err(v);
            } else {
                pos = self.head.0.load(Ordering::Relaxed);
            }
        }
    }

    /// Takes the oldest value, if any.
    pub(crate) fn pop(&self) -> Option<T> {
        let mut pos = self.tail.0.load(Ordering::Relaxed);
        loop {
            let slot = &self.slots[pos & self.mask];
            let seq = slot.seq.load(Ordering::Acquire);
            let dif = seq.wrapping_sub(pos.wrapping_add(1)) as isize;
            if dif == 0 {
                match self.tail.0.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        // SAFETY: `seq == pos + 1` means a push wrote this slot and published it.
                        let v = unsafe { (*slot.val.get()).assume_init_read() };
                        slot.seq
                            .store(pos.wrapping_add(self.mask + 1), Ordering::Release);
                        return Some(v);
                    }
                    Err(now) => pos = now,
                }
            } else if dif < 0 {
                return None;
            } else {
                pos = self.tail.0.load(Ordering::Relaxed);
            }
        }
    }

    /// Whether a pop would find nothing (a snapshot).
    pub(crate) fn is_empty(&self) -> bool {
        let pos = self.tail.0.load(Ordering::Relaxed);
        let seq = self.slots[pos & self.mask].seq.load(Ordering::Acquire);
        seq != pos.wrapping_add(1)
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;
    use std::sync::Arc;

    #[test]
    fn fifo_full_and_empty() {
        let r = Ring::<u64>::new(4);
        assert!(r.is_empty());
        for i in 0..4 {
            r.push(i).unwrap();
        }
        assert_eq!(r.push(9), Err(9));
        assert!(!r.is_empty());
        assert_eq!(r.pop(), Some(0));
        r.push(4).unwrap();
        let got: Vec<_> = std::iter::from_fn(|| r.pop()).collect();
        assert_eq!(got, [1, 2, 3, 4]);
        assert!(r.is_empty());
    }

    #[test]
    fn many_producers_lose_nothing() {
        let r = Arc::new(Ring::<(u32, u32)>::new(64));
        let producers: Vec<_> = (0..4u32)
            .map(|t| {
                let r = r.clone();
                std::thread::spawn(move || {
                    for i in 0..20_000u32 {
                        while r.push((t, i)).is_err() {
                            std::thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        let mut next = [0u32; 4];
        let mut n = 0;
        while n < 80_000 {
            match r.pop() {
                Some((t, i)) => {
                    assert_eq!(next[t as usize], i, "per-producer order kept");
                    next[t as usize] += 1;
                    n += 1;
                }
                None => std::thread::yield_now(),
            }
        }
        for p in producers {
            p.join().unwrap();
        }
        assert!(r.is_empty());
    }
}
