//! A bounded FIFO of packets: the shape shared by BSD's `struct ifqueue` (ipintrq,
//! if_snd) and by descriptor rings.
//!
//! Parameters: `capacity` \[packets\]. Behaviour: `push` on a full queue refuses the packet
//! and counts a drop (BSD's `IF_QFULL` / `IF_DROP`); nothing is allocated after creation
//! while the queue stays within the capacity given at creation.
//!
//! Counters: `drops` (refused because full), `high_water` (largest length seen).

use std::collections::VecDeque;

/// Largest capacity preallocated up front; longer queues (used to approximate an
/// infinite queue in theory tests) grow on demand.
const PREALLOC_MAX: usize = 4096;

/// Bounded FIFO with drop counting.
#[derive(Clone, Debug)]
pub struct BoundedQueue<T> {
    buf: VecDeque<T>,
    capacity: usize,
    /// Items refused because the queue was full -- counter.
    pub drops: u64,
    /// Largest length reached -- counter.
    pub high_water: usize,
}

impl<T> BoundedQueue<T> {
    /// An empty queue holding at most `capacity` items.
    pub fn new(capacity: usize) -> Self {
        BoundedQueue {
            buf: VecDeque::with_capacity(capacity.min(PREALLOC_MAX)),
            capacity,
            drops: 0,
            high_water: 0,
        }
    }

    /// Append `item`; if the queue is full, count a drop and give the item back.
    #[inline]
    pub fn push(&mut self, item: T) -> Result<(), T> {
        if self.buf.len() >= self.capacity {
            self.drops += 1;
            return Err(item);
        }
        self.buf.push_back(item);
        self.high_water = self.high_water.max(self.buf.len());
        Ok(())
    }

    /// Remove the oldest item.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        self.buf.pop_front()
    }

    /// The oldest item.
    #[inline]
    pub fn front(&self) -> Option<&T> {
        self.buf.front()
    }

    /// Current length.
    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Whether full.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.buf.len() >= self.capacity
    }

    /// Maximum length.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Iterate from oldest to newest.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.buf.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_when_full_and_keeps_order() {
        let mut q = BoundedQueue::new(2);
        assert!(q.push(1).is_ok());
        assert!(q.push(2).is_ok());
        assert_eq!(q.push(3), Err(3));
        assert_eq!((q.drops, q.high_water), (1, 2));
        assert_eq!(q.pop(), Some(1));
        assert!(q.push(4).is_ok());
        assert_eq!(q.iter().copied().collect::<Vec<_>>(), vec![2, 4]);
    }
}
