//! A bounded record: the most recent entries of an ever-growing log (the trace of writes,
//! the notes of non-API messages, the watch deliveries), numbered from the start of the run.
//!
//! Entries are appended; once `2 × keep` are held the oldest `keep` are dropped at once (one
//! amortised move instead of one per entry), so between `keep` and `2 × keep` of the most recent
//! entries are kept. [`History::total`] counts every entry ever appended: `dropped() + i` is
//! the number of the `i`-th entry held, so readers that remember how far they have read keep
//! working across drops ([`History::since`]).

/// A bounded log (see the module docs). `keep == 0` keeps everything.
#[derive(Clone, Debug)]
pub struct History<T> {
    items: Vec<T>,
    dropped: usize,
    keep: usize,
}

impl<T> History<T> {
    /// An empty log keeping at least the last `keep` entries (0: all of them).
    pub fn new(keep: usize) -> History<T> {
        History { items: Vec::new(), dropped: 0, keep }
    }

    /// Appends one entry.
    pub fn push(&mut self, item: T) {
        if self.keep > 0 && self.items.len() >= 2 * self.keep {
            self.items.drain(..self.keep);
            self.dropped += self.keep;
        }
        self.items.push(item);
    }

    /// The entries held, oldest first.
    pub fn held(&self) -> &[T] {
        &self.items
    }

    /// How many entries were dropped from the front.
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// How many entries were ever appended.
    pub fn total(&self) -> usize {
        self.dropped + self.items.len()
    }

    /// The entries numbered `from` and later that are still held (all held entries if `from`
    /// was dropped already).
    pub fn since(&self, from: usize) -> &[T] {
        &self.items[from.saturating_sub(self.dropped).min(self.items.len())..]
    }
}

impl<T: Clone> History<T> {
    /// Holds nothing, numbered as now (a time-travel snapshot keeps only how far its logs
    /// went; [`History::rewind`] gets the entries back from a later state of the same run).
    pub fn forget(&mut self) {
        self.dropped = self.total();
        self.items = Vec::new();
    }

    /// This log as it was at `total` entries, taken from `later`, a later state of the same
    /// log (entries `later` no longer holds stay dropped).
    pub fn rewind(&mut self, later: &History<T>, total: usize) {
        let held = total.saturating_sub(later.dropped).min(later.items.len());
        self.items = later.items[..held].to_vec();
        self.dropped = total - held;
    }
}

impl<T> Extend<T> for History<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        for item in items {
            self.push(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::History;

    #[test]
    fn keeps_between_keep_and_twice_keep_and_numbers_from_the_start() {
        let mut h = History::new(3);
        h.extend(0..6);
        assert_eq!((h.held(), h.dropped(), h.total()), (&[0, 1, 2, 3, 4, 5][..], 0, 6));
        h.push(6);
        assert_eq!((h.held(), h.dropped(), h.total()), (&[3, 4, 5, 6][..], 3, 7));
        assert_eq!(h.since(5), &[5, 6]);
        assert_eq!(h.since(1), &[3, 4, 5, 6], "a reader behind the drop gets what is held");
        assert_eq!(h.since(7), &[] as &[i32]);
        assert_eq!(h.since(99), &[] as &[i32]);
    }

    #[test]
    fn forget_then_rewind_from_a_later_state_restores_what_is_still_held() {
        let mut later = History::new(3);
        later.extend(0..7); // holds 3..=6
        let mut snapshot = History::new(3);
        snapshot.extend(0..5);
        snapshot.forget();
        assert_eq!((snapshot.held(), snapshot.total()), (&[] as &[i32], 5));
        snapshot.rewind(&later, 5);
        assert_eq!((snapshot.held(), snapshot.dropped(), snapshot.total()), (&[3, 4][..], 3, 5));
        let mut early = History::new(3);
        early.rewind(&later, 2);
        assert_eq!((early.held(), early.dropped(), early.total()), (&[] as &[i32], 2, 2), "entries no longer held stay dropped");
    }

    #[test]
    fn keep_zero_keeps_everything() {
        let mut h = History::new(0);
        h.extend(0..10_000);
        assert_eq!((h.held().len(), h.dropped()), (10_000, 0));
    }
}
