//! The heaviest keys, counted apart from the spatial sample.
//!
//! A spatial sample's error is dominated by the few hottest keys: in a Zipf trace the hottest
//! key alone can be a tenth of all requests, and whether its hash fell under the threshold moves
//! the whole curve. So one hit in [`crate::slot::HEAVY_REPORT`] of each thread's hits (spread
//! evenly over the keys by `counters::heavy_tick`) reports its value, and the keys reported
//! most are kept here with their hits and their charge, in a table of bounded size kept by
//! Space-Saving (Metwally, Agrawal and El Abbadi, ICDT 2005): a new key takes the place of the
//! least-reported key that is not heavy, and inherits its standing, so a key reported more
//! often than the table's least gets in and stays whenever it first shows. The standing orders
//! the table only: it never counts as hits, nor toward being heavy. A heavy key is never the
//! one to go: its hits must be counted without a gap. (A new key once took the place only of
//! a key of less than one report: a table filled early by a Zipf trace's tail then refused
//! every new key until the next aging — for good in a trace that never ages, where ranks 89
//! and 92 of a Zipf 1.0 trace, hot enough to be heavy, were never counted apart.) These keys
//! leave the miniatures, which then model only the rest; at a size `B` the prediction counts
//! the heavy keys that fit in `B` hottest first (they are the values any policy keeps) and the
//! miniatures' rest at `B` minus their bytes.
//!
//! Reports are a sample of hits, so a key's count is noisy; and keys chosen because their
//! count is high are, among keys of equal heat, the ones whose count came out high by luck —
//! their counts overstate their hits (in a hot set of equally hot keys, the whole table would).
//! So the reports are two independent samples, told apart by one more bit of the hit's number
//! ([`Report::selects`]): the *selecting* half decides which keys are in the table and which
//! are heavy, the other half alone counts their hits until the key is heavy. The count is then
//! unbiased whatever the selection was. Once a key is heavy the selection is made, and the
//! reports of both halves count, each for half as many hits: the heavy keys' requests of a
//! Zipf 1.0 trace (465k), estimated at 16 offsets of the hit numbers, spread by 4.0k instead
//! of 5.2k. A key enters the table on either report, so that no counting report of a key
//! that becomes heavy is lost.
//!
//! Only keys selected for at least [`PROMOTE_HITS`] hits, and [`HEAVIER_THAN_MEAN`] times a
//! sampled key's mean requests, count as heavy: below that the counts' spread would be a large
//! error, or the key is no hotter than the rest, and such a key is left to the sample.
//!
//! "Any policy keeps them" has one exception: a value invalidated (REFRESH TABLE, a
//! metastore event) comes back as a newcomer, and the cache's small cold ring evicts a
//! newcomer not read again soon enough — a second miss, at small sizes more often than at large
//! ones. So the table counts each key's misses and invalidations too (its requests are its hits
//! and misses), and at a size whose cold ring keeps a newcomer for `T` (the ring's bytes over
//! the bytes stored a second there: `State::cold_life`), a key requested `λ` times a second
//! loses `e^(−λT)` of a hit per invalidation (`examples/churn_probe.rs` checks it against the
//! real cache).
//!
//! The floor ([`PROMOTE_HITS`]) is a number of hits, but counts halve at each aging: a key
//! requested steadily at the floor would be heavy just before an aging and not just after it,
//! leaving the miniatures and coming back to them cold (missing at every size) every half-life
//! — a curve aged every 15 minutes read up to 0.08 low in the middle for it (docs/benchmarks.md,
//! "Keys that come and go"). So a heavy key stays heavy down to a [`DEMOTE_SHARE`] of the floor.
//! The bar of the mean needs no such margin: the mean ages with the counts.
//!
//! Invariant: at most `limit` keys, and a heavy key is never replaced; a key's hits are
//! counted by the counting half, and once it is heavy by both; counts age with the
//! miniatures' counts; a heavy key's selected hits are at least the bar of the mean and a
//! [`DEMOTE_SHARE`] of the floor (the mean's bar checked when it is set, after an aging).

use std::collections::HashMap;

#[derive(Debug, Clone, Copy)]
struct HeavyKey {
    /// Hits by the selecting reports: membership and promotion.
    selected: f64,
    /// Hits by the counting reports: the estimate the curve uses.
    hits: f64,
    charge: u64,
    /// Its misses since it entered the table (aged as the hits are).
    misses: f64,
    /// Times its value was invalidated since it entered the table (aged as the hits are).
    invalidations: f64,
    /// Whether it is heavy: from `promote` selected hits until under `stay`.
    heavy: bool,
    /// The standing of the key whose place it took (Space-Saving): it orders the table, and is
    /// never counted as hits.
    inherited: f64,
    /// The hits its reports stood for since it entered the table, both halves (aged as the
    /// hits are): what the sample's byte luck takes out of the cache's reported hits once the
    /// key is heavy ([`super::luck`]).
    reported: f64,
}

/// A heavy key as the curve uses it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Counted {
    /// Its key's hash.
    pub(super) hash: u64,
    /// Its hits (the counting half's estimate).
    pub(super) hits: f64,
    /// Its misses: with the hits, its requests.
    pub(super) misses: f64,
    /// What its value is charged.
    pub(super) charge: u64,
    /// Times its value was invalidated.
    pub(super) invalidations: f64,
}

/// One report: a hit that stands for [`REPORT_HITS`] hits of its value, in the selecting or the
/// counting half of the sample.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Report {
    pub(crate) selects: bool,
}

/// Hits one report stands for: each half samples one hit in twice the report interval.
const REPORT_HITS: f64 = 2.0 * crate::slot::HEAVY_REPORT as f64;

/// The table of heavy keys.
pub(super) struct Heavy {
    keys: HashMap<u64, HeavyKey>,
    limit: usize,
    /// Selected hits from which a key is heavy ([`Heavy::set_promote`]).
    promote: f64,
    /// Selected hits below which a heavy key is heavy no more.
    stay: f64,
}

/// Selected hits from which a key of the table is heavy, at the least.
const PROMOTE_HITS: f64 = 256.0;

/// And at least this many times the mean requests of a sampled key: where every key is about
/// as popular as the next (a loop, a scan), two lucky selecting reports would otherwise make
/// hundreds of ordinary keys heavy, and "heavy keys fit hottest first and hit" is false of them
/// (a loop's keys hit at the size that recorded them, not at a smaller one).
/// 64 rather than 16: at 16, Zipf 0.8's moderately hot keys were heavy too, and "fit hottest
/// first" overstated their hits at middle sizes (docs/benchmarks.md, "Heavy keys of a loop").
pub(super) const HEAVIER_THAN_MEAN: f64 = 64.0;

/// A heavy key stays heavy until its selected hits fall below this share of [`PROMOTE_HITS`].
/// 4: a key's aged count swings by a factor of 2 over a half-life when its requests are steady,
/// and a key near the floor has few reports, whose luck is another factor.
pub(super) const DEMOTE_SHARE: f64 = 4.0;

/// Bytes one heavy key costs in the table: its slot (hash and counts, a control byte) at the
/// map's load factor of 7/8.
const BYTES_PER_KEY: u64 = (std::mem::size_of::<(u64, HeavyKey)>() as u64 + 1) * 8 / 7;

impl Heavy {
    pub(super) fn new(limit: usize) -> Self {
        Self {
            keys: HashMap::new(),
            limit: limit.max(1),
            promote: PROMOTE_HITS,
            stay: PROMOTE_HITS / DEMOTE_SHARE,
        }
    }

    /// Keys are heavy from `hits` selected hits (the bar of the mean; [`PROMOTE_HITS`] at the
    /// least), and stay heavy down to `hits` (a [`DEMOTE_SHARE`] of the floor at the least).
    /// Returns the hashes of the keys that became heavy by it.
    pub(super) fn set_promote(&mut self, hits: f64) -> Vec<u64> {
        self.promote = hits.max(PROMOTE_HITS);
        self.stay = hits.max(PROMOTE_HITS / DEMOTE_SHARE);
        let mut newly = Vec::new();
        for (&hash, key) in &mut self.keys {
            if !key.heavy && key.selected >= self.promote {
                key.heavy = true;
                newly.push(hash);
            } else if key.heavy && key.selected < self.stay {
                key.heavy = false;
            }
        }
        newly
    }

    /// Whether the key of `hash` is heavy: counted here, not in the miniatures.
    pub(super) fn is_heavy(&self, hash: u64) -> bool {
        self.keys.get(&hash).is_some_and(|k| k.heavy)
    }

    /// A report of the key of `hash`, charged `charge` (0: unknown). Returns whether the key
    /// became heavy now.
    pub(super) fn report(&mut self, hash: u64, charge: u64, report: Report) -> bool {
        if let Some(key) = self.keys.get_mut(&hash) {
            key.reported += crate::slot::HEAVY_REPORT as f64;
            if key.heavy {
                // Chosen already: both halves count, each report for half as many hits.
                key.hits += REPORT_HITS / 2.0;
            } else if !report.selects {
                key.hits += REPORT_HITS;
            }
            if report.selects {
                key.selected += REPORT_HITS;
            }
            if charge != 0 {
                key.charge = charge;
            }
            let newly = !key.heavy && key.selected >= self.promote;
            key.heavy |= newly;
            return newly;
        }
        let (selected, hits) = if report.selects {
            (REPORT_HITS, 0.0)
        } else {
            (0.0, REPORT_HITS)
        };
        let Some(inherited) = self.make_room() else {
            return false;
        };
        self.keys.insert(
            hash,
            HeavyKey {
                selected,
                hits,
                charge,
                misses: 0.0,
                invalidations: 0.0,
                heavy: selected >= self.promote,
                inherited,
                reported: crate::slot::HEAVY_REPORT as f64,
            },
        );
        selected >= self.promote
    }

    /// The key of `hash` missed (counted if it is in the table).
    pub(super) fn missed(&mut self, hash: u64) {
        if let Some(key) = self.keys.get_mut(&hash) {
            key.misses += 1.0;
        }
    }

    /// The value of the key of `hash` was invalidated (counted if it is in the table).
    pub(super) fn invalidated(&mut self, hash: u64) {
        if let Some(key) = self.keys.get_mut(&hash) {
            key.invalidations += 1.0;
        }
    }

    /// Halves the counts; keys left with less than one hit go, and a heavy key whose selected
    /// hits fell below a [`DEMOTE_SHARE`] of the floor is heavy no more (its requests go back to
    /// the sample). The bar of the mean is checked at the next [`Heavy::set_promote`], once the
    /// mean has aged too.
    pub(super) fn age(&mut self) {
        let demote = PROMOTE_HITS / DEMOTE_SHARE;
        self.keys.retain(|_, key| {
            key.selected /= 2.0;
            key.hits /= 2.0;
            key.misses /= 2.0;
            key.invalidations /= 2.0;
            key.inherited /= 2.0;
            key.reported /= 2.0;
            key.heavy &= key.selected >= demote;
            key.selected + key.hits >= 1.0
        });
    }

    /// The bytes times hits that the heavy keys' reports stood for since they entered the
    /// table: their part of every report's ([`super::luck`]).
    pub(super) fn reported_bytes(&self) -> f64 {
        self.keys
            .values()
            .filter(|key| key.heavy)
            .map(|key| key.reported * key.charge as f64)
            .sum()
    }

    /// The heavy keys, hottest first by their selecting count: (counted hits, charge). Ordered
    /// by the other half than the one they report, for the same reason as the selection: the
    /// keys that fit a small size first would otherwise be those counted high by luck.
    pub(super) fn by_hits(&self) -> Vec<Counted> {
        let heavy = self.hottest_first().into_iter();
        heavy
            .map(|(hash, key)| Counted {
                hash,
                hits: key.hits,
                misses: key.misses,
                charge: key.charge,
                invalidations: key.invalidations,
            })
            .collect()
    }

    /// The hashes of every key in the table, heavy or not yet.
    pub(super) fn tracked(&self) -> Vec<u64> {
        self.keys.keys().copied().collect()
    }

    /// The hashes of the heavy keys, hottest first by their selecting count.
    pub(super) fn hottest(&self) -> Vec<u64> {
        let heavy = self.hottest_first().into_iter();
        heavy.map(|(hash, _)| hash).collect()
    }

    /// The heavy keys, hottest first by their selecting count.
    fn hottest_first(&self) -> Vec<(u64, HeavyKey)> {
        let mut keys: Vec<(u64, HeavyKey)> = self
            .keys
            .iter()
            .filter(|(_, k)| k.heavy)
            .map(|(hash, k)| (*hash, *k))
            .collect();
        keys.sort_by(|a, b| b.1.selected.total_cmp(&a.1.selected));
        keys
    }

    /// Makes the key of `hash` heavy at once — a flood of its requests showed it is — in the
    /// place of the least-reported key that is not heavy if the table is full; its hits are
    /// counted from now on (by both halves, as any heavy key's). Returns whether it became heavy
    /// now (not when every key of a full table is heavy).
    pub(super) fn promote(&mut self, hash: u64, charge: u64) -> bool {
        if let Some(key) = self.keys.get_mut(&hash) {
            key.selected = key.selected.max(self.promote);
            let newly = !key.heavy;
            key.heavy = true;
            return newly;
        }
        let Some(inherited) = self.make_room() else {
            return false;
        };
        self.keys.insert(
            hash,
            HeavyKey {
                selected: self.promote,
                hits: 0.0,
                charge,
                misses: 0.0,
                invalidations: 0.0,
                heavy: true,
                inherited,
                reported: 0.0,
            },
        );
        true
    }

    /// Room for one more key: none needed (standing 0), or the place of the least-reported key
    /// that is not heavy, whose standing (its reports of both halves and what it inherited) the
    /// newcomer takes; `None` when every key is heavy.
    fn make_room(&mut self) -> Option<f64> {
        if self.keys.len() < self.limit {
            return Some(0.0);
        }
        let (least, standing) = self
            .keys
            .iter()
            .filter(|(_, key)| !key.heavy)
            .map(|(hash, key)| (*hash, key.selected + key.hits + key.inherited))
            .min_by(|a, b| a.1.total_cmp(&b.1))?;
        self.keys.remove(&least);
        Some(standing)
    }

    /// Bytes the table holds.
    pub(super) fn bytes(&self) -> u64 {
        self.keys.capacity() as u64 * BYTES_PER_KEY
    }
}

/// What the heavy keys that fit take: their hits, the weight they take of the cache's bytes,
/// and the values they take of its count capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Fitting {
    pub(super) hits: f64,
    pub(super) weight: u64,
    pub(super) values: u64,
}

/// Of `keys` (by hits, most first), those that fit in `size` bytes (`None`: unlimited) and
/// `count` values, hottest first (a key that does not fit is skipped, a smaller one after it
/// may). Each weighs at least `size / count`, as the real cache weighs a value (`Scale`): heavy
/// keys take count slots too, or a count-bound cache would be predicted with its heavy keys
/// *and* a full count of other values. `lost` says how many of a fitting key's hits this size
/// loses to its invalidations (see the module's doc).
pub(super) fn fitting(
    keys: &[Counted],
    size: Option<u64>,
    count: u64,
    lost: impl Fn(&Counted) -> f64,
) -> Fitting {
    let count = count.max(1);
    let (room, quantum) = match size {
        Some(size) => ((size as f64 * 0.97) as u64, size.div_ceil(count)),
        None => (u64::MAX, 0),
    };
    let mut fit = Fitting {
        hits: 0.0,
        weight: 0,
        values: 0,
    };
    for key in keys {
        let weight = key.charge.max(quantum);
        if fit.values < count && fit.weight.saturating_add(weight) <= room {
            fit.hits += (key.hits - lost(key)).max(0.0);
            fit.weight += weight;
            fit.values += 1;
        }
    }
    fit
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(heavy: &Heavy) -> Vec<(f64, u64)> {
        heavy.by_hits().iter().map(|k| (k.hits, k.charge)).collect()
    }

    #[test]
    fn a_key_no_hotter_than_the_rest_is_not_heavy() {
        const SELECTS: Report = Report { selects: true };
        let mut heavy = Heavy::new(8);
        // Sampled keys are requested 7.5 times each on average (at 64 times that: 480 selected
        // hits): 256 is not heavy.
        assert!(heavy.set_promote(HEAVIER_THAN_MEAN * 7.5).is_empty());
        heavy.report(1, 100, SELECTS);
        assert!(
            !heavy.report(1, 100, SELECTS),
            "256 selected hits: not heavy"
        );
        heavy.report(2, 100, SELECTS);
        assert!(!heavy.is_heavy(1));
        assert!(heavy.by_hits().is_empty());
        assert!(!heavy.report(1, 100, SELECTS));
        assert!(
            heavy.report(1, 100, SELECTS),
            "512 selected hits: above 480"
        );
        heavy.report(2, 100, SELECTS);
        // The mean falls: the floor holds, and the keys above it now are returned.
        assert_eq!(heavy.set_promote(1.0), vec![2]);
        assert!(heavy.is_heavy(1) && heavy.is_heavy(2));
    }

    /// Counts halve at each aging: a key heavy at the floor stays heavy down to a quarter of it,
    /// or a steadily requested key would leave the miniatures and come back every aging.
    #[test]
    fn a_heavy_key_stays_heavy_down_to_a_quarter_of_the_floor() {
        const SELECTS: Report = Report { selects: true };
        let mut heavy = Heavy::new(8);
        heavy.report(1, 100, SELECTS);
        assert!(heavy.report(1, 100, SELECTS), "256 selected hits: heavy");
        heavy.report(1, 100, SELECTS);
        heavy.age();
        assert!(heavy.is_heavy(1), "192 selected hits, under 256");
        heavy.age();
        assert!(heavy.is_heavy(1), "96: still above a quarter of 256");
        heavy.age();
        assert!(!heavy.is_heavy(1), "48: heavy no more");
        assert!(heavy.by_hits().is_empty());
        assert!(!heavy.report(1, 100, SELECTS), "176: under the threshold");
        assert!(heavy.report(1, 100, SELECTS), "304: heavy again");
        // The bar of the mean ages with the counts: no margin below it.
        assert!(heavy.set_promote(300.0).is_empty());
        assert!(heavy.is_heavy(1), "304 selected hits, above 300");
        assert!(heavy.set_promote(320.0).is_empty());
        assert!(!heavy.is_heavy(1), "304, under the mean's bar of 320");
    }

    #[test]
    fn a_full_table_makes_room_for_a_new_key_but_never_in_a_heavy_ones_place() {
        const SELECTS: Report = Report { selects: true };
        const COUNTS: Report = Report { selects: false };
        let mut heavy = Heavy::new(2);
        assert!(!heavy.report(1, 100, COUNTS), "counted, not selected");
        assert!(hits(&heavy).is_empty());
        assert!(!heavy.report(1, 100, SELECTS), "not heavy yet");
        assert!(!heavy.report(2, 100, SELECTS));
        assert!(heavy.report(1, 100, SELECTS), "256 selected hits: heavy");
        assert!(!heavy.report(1, 100, SELECTS), "heavy already");
        // Full: a new key takes the place of the least-reported key that is not heavy, however
        // often that one was reported, and inherits its standing.
        assert!(!heavy.report(3, 100, SELECTS));
        assert!(!heavy.keys.contains_key(&2) && heavy.keys.contains_key(&3));
        assert!(!heavy.report(4, 100, COUNTS), "in the place of key 3");
        assert!(!heavy.keys.contains_key(&3) && heavy.is_heavy(1));
        // Key 4 stands at 384 (key 3's 256 and its own report) but was selected for nothing.
        assert!(
            !heavy.report(4, 100, SELECTS),
            "128 selected hits of its own"
        );
        assert!(heavy.report(4, 100, SELECTS), "256: heavy");
        assert!(!heavy.report(5, 100, SELECTS), "every key heavy: no room");
        assert!(!heavy.keys.contains_key(&5));
        // Until key 1 was heavy only the counting half counted (one report: 128 hits); since,
        // both halves count, each report for 64 hits ("heavy already" was one).
        let of = |heavy: &Heavy, hash| heavy.keys[&hash].hits;
        assert_eq!(of(&heavy, 1), 128.0 + 64.0);
        heavy.report(1, 100, COUNTS);
        heavy.report(1, 100, SELECTS);
        assert_eq!(of(&heavy, 1), 128.0 + 3.0 * 64.0);
        assert_eq!(
            of(&heavy, 4),
            128.0,
            "one counting report before it was heavy"
        );
        heavy.age();
        assert_eq!((of(&heavy, 1), of(&heavy, 4)), (160.0, 64.0));
        assert!(heavy.is_heavy(1) && heavy.is_heavy(4));
    }

    /// A table filled by keys reported once (a Zipf trace's tail fills it early) takes in a hot
    /// key that shows later, at once: it no longer waits for an aging to free a place.
    #[test]
    fn a_hot_key_that_shows_once_the_table_is_full_gets_in_and_becomes_heavy() {
        let mut heavy = Heavy::new(8);
        for tail in 100..108 {
            heavy.report(
                tail,
                100,
                Report {
                    selects: tail % 2 == 0,
                },
            );
        }
        for _ in 0..4 {
            heavy.report(1, 100, Report { selects: true });
            heavy.report(1, 100, Report { selects: false });
        }
        assert!(heavy.is_heavy(1));
        assert_eq!(heavy.keys.len(), 8);
        // One counting report before it was heavy (128 hits), five reports after (64 each).
        assert_eq!(hits(&heavy), vec![(128.0 + 5.0 * 64.0, 100)]);
    }

    #[test]
    fn a_flooding_key_is_promoted_into_a_full_table() {
        let mut heavy = Heavy::new(1);
        assert!(!heavy.report(1, 100, Report { selects: true }));
        assert!(heavy.promote(2, 300), "heavy at once");
        assert!(!heavy.promote(2, 300), "heavy already");
        assert_eq!(heavy.hottest(), vec![2]);
        assert_eq!(
            hits(&heavy),
            vec![(0.0, 300)],
            "its hits counted from now on"
        );
        assert!(!heavy.promote(3, 300), "no room beside a heavy key");
        assert_eq!(heavy.hottest(), vec![2]);
    }

    #[test]
    fn misses_and_invalidations_of_tracked_keys_count_and_age() {
        let mut heavy = Heavy::new(4);
        heavy.missed(1);
        heavy.invalidated(1);
        assert!(heavy.keys.is_empty(), "not in the table: nothing counted");
        heavy.report(1, 100, Report { selects: true });
        heavy.missed(1);
        heavy.invalidated(1);
        assert!(!heavy.is_heavy(1), "in the table, not heavy yet");
        assert!(heavy.report(1, 100, Report { selects: true }));
        heavy.missed(1);
        heavy.invalidated(1);
        assert!(heavy.is_heavy(1));
        assert_eq!(heavy.tracked(), vec![1]);
        let counted = heavy.by_hits()[0];
        assert_eq!((counted.misses, counted.invalidations), (2.0, 2.0));
        heavy.report(1, 100, Report { selects: true });
        heavy.report(1, 100, Report { selects: true });
        heavy.age();
        let counted = heavy.by_hits()[0];
        assert_eq!((counted.misses, counted.invalidations), (1.0, 1.0));
    }

    #[test]
    fn a_fitting_key_loses_what_its_invalidations_cost() {
        let key = |hits, invalidations| Counted {
            hash: 0,
            hits,
            misses: invalidations,
            charge: 100,
            invalidations,
        };
        let keys = [key(100.0, 10.0), key(50.0, 0.0), key(5.0, 20.0)];
        let lost = |k: &Counted| k.invalidations * 0.5;
        // Each invalidation costs half a hit here; a key never loses more than its hits.
        assert_eq!(fitting(&keys, None, 10, lost).hits, 95.0 + 50.0);
        assert_eq!(fitting(&keys, Some(100), 10, lost).hits, 0.0, "none fits");
        assert_eq!(fitting(&keys, None, 10, |_| 0.0).hits, 155.0);
    }

    #[test]
    fn the_hottest_keys_that_fit_count() {
        let keys = [(100.0, 600), (50.0, 600), (10.0, 100)].map(|(hits, charge)| Counted {
            hash: 0,
            hits,
            misses: 0.0,
            charge,
            invalidations: 0.0,
        });
        let fit = |size, count| {
            let f = fitting(&keys, size, count, |_| 0.0);
            (f.hits, f.weight, f.values)
        };
        assert_eq!(fit(Some(1000), 1000), (110.0, 700, 2));
        assert_eq!(fit(Some(2000), 1000), (160.0, 1300, 3));
        assert_eq!(fit(Some(10), 1000), (0.0, 0, 0));
        // Count-bound: each value weighs at least 2000 / 2, and two values at most fit.
        assert_eq!(fit(Some(2000), 2), (100.0, 1000, 1));
        assert_eq!(fit(None, 2), (150.0, 1200, 2));
        assert_eq!(fit(None, 1000), (160.0, 1300, 3));
    }
}
