//! Threaded NAPI: a device polled by its own kernel thread, `napi/<dev>`, until a poll
//! completes it.

use super::*;

impl Napi {
    /// napi_threaded_poll of device `dev`'s thread: poll, `weight` frames a poll, until
    /// a poll completes the device; after a time slice, yield to other normal-priority
    /// tasks.
    pub fn thread_step(&mut self, dev: usize, first: bool, env: &mut impl RxEnv) -> Step {
        let now = env.now();
        if first {
            if !self.devs[dev].scheduled {
                return Step::Done;
            }
            self.devs[dev].thread_slice_start = now;
        }
        if let Some(h) = self.devs[dev].thread_current.take() {
            self.deliver(h, env);
        }
        let c = env.core();
        loop {
            let d = &mut self.devs[dev];
            if !d.thread_polling {
                d.thread_polling = true;
                d.thread_work = 0;
                self.thread_polls += 1;
                return Step::Run(self.poll_begin(dev, env));
            }
            let weight = d.weight;
            if d.thread_work < weight
                && let Some((h, cost)) = self.take(c, dev, env)
            {
                let d = &mut self.devs[dev];
                d.thread_work += 1;
                d.thread_current = Some(h);
                return Step::Run(cost);
            }
            let d = &mut self.devs[dev];
            d.thread_polling = false;
            let work = d.thread_work;
            if self.poll_done(work, weight, dev, env) {
                self.complete(dev, work, env);
                return Step::Done;
            }
            if self.devs[dev].prefer_busy_poll {
                // __napi_poll: busy polling is preferred; completed, or rescheduled
                // (on this thread) when napi_complete_done lets the interrupt back.
                self.prefer_yields += 1;
                if !self.napi_complete_done(dev, work, env) {
                    return Step::Done;
                }
                self.devs[dev].scheduled = true;
            }
            if env.user_level_contended()
                && now.saturating_sub(self.devs[dev].thread_slice_start) >= self.timeslice
            {
                return Step::Yield;
            }
        }
    }
}
