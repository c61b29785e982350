//! A driver's reaction to a transmit underrun, and its once-a-second link check.
//!
//! Models dc(4) of FreeBSD 4.x on the 21143 (`if_dc.c`, early 2001 as carried into
//! OpenBSD's copy of revision 1.43):
//!
//! - `dc_intr` on TX_UNDERRUN prints "TX underrun -- increasing TX threshold", calls
//!   `dc_init` for Intel and Davicom chips, then raises the transmit threshold one step
//!   (store-and-forward after the last). `dc_init` runs `dc_stop`, which frees every
//!   frame in the RX and TX rings and clears `sc->dc_link`, rebuilds the rings and
//!   re-arms `dc_tick` one period later (`timeout(dc_tick, sc, hz)`).
//! - `dc_start` returns at once while `sc->dc_link` is 0: frames wait in if_snd
//!   (DC_TX_LIST_CNT - 1 = 255 deep) and the rest are dropped there.
//! - `dc_tick` is a callout run by softclock, below the network software interrupt: it
//!   reads the PHY, sets `dc_link` when the link is up, calls `dc_start`, and re-arms
//!   itself one period later. A reset cancels a callout that softclock has not run yet
//!   (`untimeout`). When softclock gets no CPU, the link stays "down" and the frames in
//!   if_snd wait: with the reset at the wrong moment, for the rest of the run.
//! - Its body runs at `splimp()` (FreeBSD if_dc.c at 0631f4a7, L2561-2627; `tick_spl`
//!   `splimp`): softclock dispatches it, then it blocks device interrupts while it runs.
//!   (The model cancels a body a reset re-arms before it starts; in the kernel the
//!   callout has left the wheel by then and runs anyway. Softclock's dispatch takes no
//!   time and the body preempts at once, so the window is empty but for a handler
//!   already waiting at the same instant.)
//! - With DC_REDUCED_MII_POLL (the 21143, L1751-1754) the tick calls `mii_tick` only
//!   when the source's condition holds (`mii_tick_when`): on the MII branch
//!   (L2583-2588) when the receive process waits (modelled as: the receive ring has a
//!   free descriptor; a frame being received at that instant is not seen) and no
//!   transmit descriptor is in use (`dc_tx_cnt == 0`); on the DC_21143_NWAY branch
//!   (internal NWAY, `dcphy`, L2568-2581) only while the link is down, the tick then
//!   re-armed every hz/10 instead of hz (L2622-2625, dc_init L3148-3151). While the link
//!   is down the tick also runs `mii_pollstat` (L2612-2620, cost `pollstat`).
//!
//! The underrun itself comes from the bus model ([`crate::model::bus`]), not from a script.
//!
//! - `dc_rxeof`, on a descriptor with an error other than a CRC error (a frame cut
//!   short by a receive FIFO overflow), also calls `dc_init`.
//!
//! Parameters ([`LinkWatchConfig`]) with defaults: `reinit_on_underrun` true,
//! `reinit_on_rx_error` false, `reinit` 0 (CPU cost of dc_init at interrupt level)
//! \[cost\], `tick_period_ns` 1e9 (hz ticks), `tick_period_link_down_ns` none (the same
//! period while the link is down), `tick` 0 (CPU cost of one dc_tick without mii_tick)
//! \[cost\], `tick_spl` `softclock` (where the body runs: `softclock` or `splimp`),
//! `mii_tick` 0 \[cost\], `mii_tick_when` `always` (`always`, `idle`, `link-down`),
//! `pollstat` 0 (the mii_pollstat of a tick that finds the link down) \[cost\].
//!
//! Counters: `<nic>.resets`, `<nic>.ticks` (dc_tick bodies run), `<nic>.mii_ticks`
//! (ticks that ran mii_tick), `<nic>.pollstats` (ticks that ran mii_pollstat),
//! `<nic>.link_down_ms` (time the driver considered the link down),
//! `<nic>.tx_underruns` (see [`crate::model::bus`]).

use crate::model::cost::{Cost, CostParam};
use crate::model::nic::counters::Spl;
use crate::sim::engine::{Timer, TimerKey};
use crate::sim::problems::Problems;
use crate::sim::rng::StreamRng;
use crate::sim::time::SimTime;
use serde::{Deserialize, Serialize};

/// Underrun response and link check of a driver, as written in a model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkWatchConfig {
    /// Whether a transmit underrun re-initialises the chip (dc_init), which frees the
    /// rings and takes the link down until the next link check (default true).
    #[serde(default = "d_true")]
    pub reinit_on_underrun: bool,
    /// Whether a frame damaged by a receive FIFO overflow (descriptor error other than
    /// CRC) re-initialises the chip, as dc_rxeof does (default false).
    #[serde(default)]
    pub reinit_on_rx_error: bool,
    /// CPU cost of the re-initialisation, in the interrupt handler (default 0) \[cost\].
    #[serde(default)]
    pub reinit: CostParam,
    /// Period of the link check callout \[ns\] (default 1e9: dc_tick every hz ticks).
    #[serde(default = "d_period")]
    #[schemars(range(min = 1.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub tick_period_ns: f64,
    /// Period of the link check while the driver considers the link down \[ns\]
    /// (default: `tick_period_ns`; dc(4) with DC_21143_NWAY re-arms every hz/10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1.0, max = crate::sim::problems::MAX_TIME_NS))]
    pub tick_period_link_down_ns: Option<f64>,
    /// CPU cost of one link check without `mii_tick` (default 0) \[cost\].
    #[serde(default)]
    pub tick: CostParam,
    /// Where the tick body runs: `softclock` (below the network software interrupt)
    /// or `splimp` (dispatched by softclock, then blocking device interrupts, as
    /// dc_tick's `splimp()`) (default `softclock`).
    #[serde(default)]
    pub tick_spl: Spl,
    /// CPU cost of `mii_tick` when the tick calls it: the PHY driver's status reads
    /// (default 0) \[cost\].
    #[serde(default)]
    pub mii_tick: CostParam,
    /// When the tick calls `mii_tick` (default `always`).
    #[serde(default)]
    pub mii_tick_when: MiiTickWhen,
    /// CPU cost of `mii_pollstat`, which the tick runs while the driver considers the
    /// link down, to bring it up (default 0) \[cost\].
    #[serde(default)]
    pub pollstat: CostParam,
}

/// When dc_tick calls `mii_tick`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum MiiTickWhen {
    /// On every tick (drivers without DC_REDUCED_MII_POLL).
    #[default]
    Always,
    /// DC_REDUCED_MII_POLL on an MII PHY: only when the receive process is waiting
    /// for a frame (its ring has a free descriptor) and no transmit descriptor is in
    /// use (nothing queued or unreclaimed on the TX ring).
    Idle,
    /// DC_21143_NWAY (internal NWAY): only while the driver considers the link down.
    LinkDown,
}

fn d_true() -> bool {
    true
}
fn d_period() -> f64 {
    1e9
}

impl LinkWatchConfig {
    /// Range checks.
    pub fn validate(&self, p: &mut Problems) {
        p.period_ns("tick_period_ns", self.tick_period_ns);
        if let Some(d) = self.tick_period_link_down_ns {
            p.period_ns("tick_period_link_down_ns", d);
        }
        for (f, c) in [
            ("reinit", &self.reinit),
            ("tick", &self.tick),
            ("mii_tick", &self.mii_tick),
            ("pollstat", &self.pollstat),
        ] {
            if let Err(e) = c.check() {
                p.push(f, e);
            }
        }
    }
}

/// A NIC's link watch during a run.
#[derive(Clone, Debug)]
pub struct LinkWatch {
    reinit_on_underrun: bool,
    reinit_on_rx_error: bool,
    reinit: Cost,
    period: SimTime,
    period_down: SimTime,
    tick: Cost,
    /// Where the tick body runs.
    spl: Spl,
    mii_tick: Cost,
    mii_when: MiiTickWhen,
    pollstat: Cost,
    rng: StreamRng,
    /// The armed callout (re-arming cancels the previous one).
    callout: Timer,
    /// The callout fired and dc_tick waits for softclock; a re-arm (untimeout) before
    /// it runs cancels it.
    due: bool,
    /// The callout whose dc_tick is running.
    running: Option<TimerKey>,
    /// When the link went down, while it is down.
    down_since: Option<SimTime>,
    /// Chip re-initialisations -- counter.
    pub resets: u64,
    /// dc_tick bodies run -- counter.
    pub ticks: u64,
    /// Ticks that ran mii_tick -- counter.
    pub mii_ticks: u64,
    /// Ticks that ran mii_pollstat -- counter.
    pub pollstats: u64,
    /// Time the link was considered down \[ps\] -- counter.
    pub down_ps: u64,
}

/// How the start of a dc_tick goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TickStart {
    /// Cancelled by a re-arm before it ran: nothing.
    Cancelled,
    /// Softclock dispatched the callout; the body runs next at splimp.
    ToSplimp,
    /// The body runs for this long.
    Run(SimTime),
}

/// What the NIC looks like to dc_tick's MII branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NicView {
    /// The link is up.
    pub link_up: bool,
    /// The RX ring has a free descriptor and the transmitter is idle (the MII branch's
    /// "not busy" test).
    pub idle: bool,
}

impl LinkWatch {
    pub fn new(cfg: &LinkWatchConfig, clock_mhz: f64, rng: StreamRng) -> LinkWatch {
        LinkWatch {
            reinit_on_underrun: cfg.reinit_on_underrun,
            reinit_on_rx_error: cfg.reinit_on_rx_error,
            reinit: cfg.reinit.build(clock_mhz),
            period: SimTime::from_ns_f64(cfg.tick_period_ns),
            period_down: SimTime::from_ns_f64(
                cfg.tick_period_link_down_ns.unwrap_or(cfg.tick_period_ns),
            ),
            tick: cfg.tick.build(clock_mhz),
            spl: cfg.tick_spl,
            mii_tick: cfg.mii_tick.build(clock_mhz),
            mii_when: cfg.mii_tick_when,
            pollstat: cfg.pollstat.build(clock_mhz),
            rng,
            callout: Timer::IDLE,
            due: false,
            running: None,
            down_since: None,
            resets: 0,
            ticks: 0,
            mii_ticks: 0,
            pollstats: 0,
            down_ps: 0,
        }
    }

    /// The first callout's delay (its key goes to [`LinkWatch::armed`]).
    pub fn first_callout(&self) -> SimTime {
        self.period
    }

    /// Re-arm the callout (untimeout + timeout), cancelling the pending one; returns
    /// the delay (shorter while the link is down). The new callout's key goes to
    /// [`LinkWatch::armed`].
    pub fn rearm(&mut self, link_up: bool) -> SimTime {
        self.callout.cancel();
        self.due = false;
        if link_up {
            self.period
        } else {
            self.period_down
        }
    }

    /// The callout is queued as `key`.
    pub fn armed(&mut self, key: TimerKey) {
        self.callout.armed(key);
    }

    /// The callout of `key` fired: returns whether dc_tick is due (not cancelled by a
    /// later re-arm). The callout stays the current one until the next re-arm, which
    /// tells a tick that is running whether a reset re-armed it meanwhile.
    pub fn fired(&mut self, key: TimerKey) -> bool {
        if self.callout.key() != Some(key) {
            return false;
        }
        self.due = true;
        true
    }

    /// dc_tick gets the CPU (`at_spl`: the task that runs its body at splimp).
    pub fn tick_start(&mut self, at_spl: bool, nic: NicView) -> TickStart {
        if !self.due {
            // Cancelled by a reset before softclock ran it.
            return TickStart::Cancelled;
        }
        if self.spl == Spl::Splimp && !at_spl {
            return TickStart::ToSplimp;
        }
        self.due = false;
        self.running = self.callout.key();
        let mii = match self.mii_when {
            MiiTickWhen::Always => true,
            MiiTickWhen::Idle => nic.idle,
            MiiTickWhen::LinkDown => !nic.link_up,
        };
        self.ticks += 1;
        let mut cost = self.tick.sample(&mut self.rng);
        if mii {
            self.mii_ticks += 1;
            cost += self.mii_tick.sample(&mut self.rng);
        }
        if !nic.link_up {
            self.pollstats += 1;
            cost += self.pollstat.sample(&mut self.rng);
        }
        TickStart::Run(cost)
    }

    /// dc_tick's body ended at `now`: `None` if a reset re-armed the callout meanwhile
    /// (it ends there), else whether the link came back up (the callout is to be
    /// re-armed either way).
    pub fn tick_end(&mut self, now: SimTime) -> Option<bool> {
        if self
            .running
            .take()
            .is_none_or(|k| self.callout.key() != Some(k))
        {
            return None;
        }
        match self.down_since.take() {
            Some(t) => {
                self.down_ps += (now - t).0;
                Some(true)
            }
            None => Some(false),
        }
    }

    /// Whether a receive error re-initialises the chip.
    pub fn reinit_on_rx_error(&self) -> bool {
        self.reinit_on_rx_error
    }

    /// Whether a transmit underrun re-initialises the chip.
    pub fn reinit_on_underrun(&self) -> bool {
        self.reinit_on_underrun
    }

    /// The chip was re-initialised at `now` (dc_init): the link is down from then on;
    /// returns the CPU cost.
    pub fn reinit(&mut self, now: SimTime) -> SimTime {
        self.resets += 1;
        if self.down_since.is_none() {
            self.down_since = Some(now);
        }
        self.reinit.sample(&mut self.rng)
    }

    /// Time the link was down up to `now`.
    pub fn down_until(&self, now: SimTime) -> u64 {
        self.down_ps + self.down_since.map_or(0, |t| (now - t).0)
    }

    /// Its counters as of `now` under NIC `nic`'s name: `<nic>.resets`, `.ticks`,
    /// `.mii_ticks`, `.pollstats` and `.link_down_ms` (time with the link down \[ms\]).
    pub fn counters(
        &self,
        nic: &str,
        now: SimTime,
        c: &mut std::collections::BTreeMap<String, f64>,
    ) {
        c.insert(format!("{nic}.resets"), self.resets as f64);
        c.insert(format!("{nic}.ticks"), self.ticks as f64);
        c.insert(format!("{nic}.mii_ticks"), self.mii_ticks as f64);
        c.insert(format!("{nic}.pollstats"), self.pollstats as f64);
        c.insert(
            format!("{nic}.link_down_ms"),
            self.down_until(now) as f64 / 1e9,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::engine::Scheduler;
    use crate::sim::rng::RunKey;

    /// A dc(4)-like watch: 1 s tick of 1 us at splimp, 0.1 s while the link is down,
    /// MII tick 50 us when idle, pollstat 500 us, reinit 11.9 ms.
    fn watch() -> LinkWatch {
        let cfg: LinkWatchConfig = serde_json::from_value(serde_json::json!({
            "reinit_on_underrun": true,
            "reinit": 11_900_000,
            "tick_period_ns": 1e9,
            "tick_period_link_down_ns": 1e8,
            "tick": 1000,
            "tick_spl": "splimp",
            "mii_tick": 50_000,
            "mii_tick_when": "idle",
            "pollstat": 500_000,
        }))
        .expect("config");
        LinkWatch::new(&cfg, 1000.0, RunKey::single(1).stream("lw"))
    }

    const US: fn(f64) -> SimTime = |us| SimTime::from_ns_f64(us * 1e3);

    /// Queue `w`'s callout `after` from now on `s`, as the host does.
    fn arm(w: &mut LinkWatch, s: &mut Scheduler<()>, after: SimTime) -> TimerKey {
        let k = s.at_keyed(s.now() + after, ());
        w.armed(k);
        k
    }

    #[test]
    fn a_tick_runs_at_splimp_with_the_mii_branch_only_when_the_chip_is_idle() {
        let (mut w, mut s) = (watch(), Scheduler::new());
        let after = w.first_callout();
        assert_eq!(after, US(1e6));
        let g = arm(&mut w, &mut s, after);
        assert!(w.fired(g));
        let up_busy = NicView {
            link_up: true,
            idle: false,
        };
        // Softclock hands the body to splimp; there: the tick alone (busy chip).
        assert_eq!(w.tick_start(false, up_busy), TickStart::ToSplimp);
        assert_eq!(w.tick_start(true, up_busy), TickStart::Run(US(1.0)));
        assert_eq!(w.tick_end(US(1.0)), Some(false));
        let after = w.rearm(true);
        assert_eq!(after, US(1e6));
        let g = arm(&mut w, &mut s, after);
        w.fired(g);
        let up_idle = NicView {
            link_up: true,
            idle: true,
        };
        assert_eq!(w.tick_start(true, up_idle), TickStart::Run(US(51.0)));
        assert_eq!((w.ticks, w.mii_ticks, w.pollstats), (2, 1, 0));
    }

    #[test]
    fn a_reset_takes_the_link_down_until_the_next_tick_and_cancels_a_pending_one() {
        let (mut w, mut s) = (watch(), Scheduler::new());
        let first = w.first_callout();
        let g = arm(&mut w, &mut s, first);
        assert!(w.fired(g));
        // dc_init before softclock runs the tick: it costs 11.9 ms, and the re-arm
        // cancels the pending tick (shorter period while the link is down).
        assert_eq!(w.reinit(US(100.0)), US(11_900.0));
        let after = w.rearm(false);
        assert_eq!(after, US(1e5));
        let g2 = arm(&mut w, &mut s, after);
        assert_eq!(
            w.tick_start(
                true,
                NicView {
                    link_up: false,
                    idle: true
                }
            ),
            TickStart::Cancelled
        );
        assert!(!w.fired(g));
        assert!(w.fired(g2));
        // The next tick, link down: tick + MII (idle) + pollstat; it brings the link up.
        let down = NicView {
            link_up: false,
            idle: true,
        };
        assert_eq!(w.tick_start(true, down), TickStart::Run(US(551.0)));
        assert_eq!(w.tick_end(US(100_100.0)), Some(true));
        assert_eq!((w.resets, w.down_ps), (1, US(100_000.0).0));
        assert_eq!(w.down_until(US(200_000.0)), US(100_000.0).0);
    }

    #[test]
    fn a_reset_during_a_tick_ends_it_without_a_second_rearm() {
        let (mut w, mut s) = (watch(), Scheduler::new());
        let first = w.first_callout();
        let g = arm(&mut w, &mut s, first);
        w.fired(g);
        assert!(matches!(
            w.tick_start(
                true,
                NicView {
                    link_up: true,
                    idle: false
                }
            ),
            TickStart::Run(_)
        ));
        w.reinit(US(0.5));
        let after = w.rearm(false);
        arm(&mut w, &mut s, after);
        assert_eq!(w.tick_end(US(1.0)), None);
    }
}
