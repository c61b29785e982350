//! napi_defer_hard_irqs and gro_flush_timeout: the hrtimer a completing poll arms
//! instead of unmasking the interrupt, and napi_watchdog, which schedules the device
//! when it fires.

use super::*;

impl Napi {
    /// hrtimer_start of `dev`'s timer for its `gro_flush_timeout`, pinned to the current
    /// core; an armed timer is restarted (the earlier expiry no longer fires).
    pub(super) fn arm_timer(&mut self, dev: usize, env: &mut impl SchedEnv) {
        let t = self.devs[dev].gro_flush_timeout;
        self.arm_timer_for(dev, t, env);
    }

    /// hrtimer_start of `dev`'s timer for `after`, pinned to the current core.
    pub(super) fn arm_timer_for(&mut self, dev: usize, after: SimTime, env: &mut impl SchedEnv) {
        self.devs[dev].timer_at = Some(env.now() + after);
        env.set_alarm(after, self.kind, dev as u16);
    }

    /// napi_watchdog: `dev`'s hrtimer fired on the current core; schedule its poll
    /// (clearing NAPI_STATE_PREFER_BUSY_POLL) unless a busy loop or the softirq has it.
    /// An expiry the timer was restarted past is stale and does nothing.
    pub fn watchdog(&mut self, dev: usize, env: &mut (impl StackEnv + SchedEnv)) {
        let d = &mut self.devs[dev];
        if d.timer_at != Some(env.now()) {
            return;
        }
        d.timer_at = None;
        if !d.scheduled {
            d.prefer_busy_poll = false;
            d.watchdog_fired = d.watchdog_irq > SimTime::ZERO;
            self.watchdog += 1;
            self.schedule(dev, env);
        }
    }
}
