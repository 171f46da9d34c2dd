//! Virtual time behind a real clock. The world advances with wall time at a speed (1× by
//! default); at `max` it runs events as fast as it can while work is pending and follows wall
//! time at 1× once only periodic housekeeping is left. Pause freezes virtual time (requests are
//! still served, at the frozen instant); step runs a number of events or a virtual duration.
//!
//! The world itself stays deterministic: the clock only decides *how far* to run it, through
//! the same `step`/`advance_clock` calls `run_until` makes.

use kubesim_api::Millis;
use kubesim_sim::World;
use std::time::{Duration, Instant};

/// How fast virtual time runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Speed {
    /// Virtual seconds per wall second.
    Factor(f64),
    /// As fast as possible while work is pending; 1× when only periodic work is left.
    Max,
}

impl Speed {
    /// Parses `1`, `2.5`, `10x`, `max`.
    pub fn parse(text: &str) -> Result<Speed, String> {
        if text.trim().eq_ignore_ascii_case("max") {
            return Ok(Speed::Max);
        }
        let t = text.trim().trim_end_matches(['x', '×']);
        match t.parse::<f64>() {
            Ok(f) if f > 0.0 && f.is_finite() && f <= 1_000_000.0 => Ok(Speed::Factor(f)),
            _ => Err(format!("invalid speed {text:?}: use a positive number (0.5, 1, 10) or max")),
        }
    }
}

impl std::fmt::Display for Speed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Speed::Factor(x) => write!(f, "{x}"),
            Speed::Max => f.write_str("max"),
        }
    }
}

/// The world and its clock.
pub struct Sim {
    /// The simulation.
    pub world: World,
    paused: bool,
    speed: Speed,
    anchor_wall: Instant,
    anchor_virtual: Millis,
    /// Events run by the clock so far.
    pub events_run: u64,
}

impl Sim {
    /// A running clock at `speed`, starting at the world's current virtual time.
    pub fn new(world: World, speed: Speed, paused: bool) -> Sim {
        let anchor_virtual = world.now();
        Sim { world, paused, speed, anchor_wall: Instant::now(), anchor_virtual, events_run: 0 }
    }

    /// Whether virtual time is frozen.
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// The current speed.
    pub fn speed(&self) -> Speed {
        self.speed
    }

    fn reanchor(&mut self) {
        self.anchor_wall = Instant::now();
        self.anchor_virtual = self.world.now();
    }

    /// Freezes virtual time.
    pub fn pause(&mut self) {
        self.paused = true;
    }

    /// Lets virtual time run again from where it stopped.
    pub fn resume(&mut self) {
        if self.paused {
            self.paused = false;
            self.reanchor();
        }
    }

    /// Changes the speed from now on.
    pub fn set_speed(&mut self, speed: Speed) {
        self.speed = speed;
        self.reanchor();
    }

    /// The virtual time the clock says it is now (the world may lag behind it under load).
    pub fn target(&self) -> Millis {
        if self.paused {
            return self.world.now();
        }
        let factor = match self.speed {
            Speed::Factor(f) => f,
            Speed::Max => 1.0,
        };
        let elapsed = self.anchor_wall.elapsed().as_secs_f64() * 1000.0 * factor;
        self.anchor_virtual + elapsed as Millis
    }

    /// Runs the world towards the clock's target for at most `budget` of wall time, giving up
    /// early when `yield_now` says a request is waiting. Returns whether anything ran.
    pub fn advance(&mut self, budget: Duration, yield_now: &dyn Fn() -> bool) -> bool {
        if self.paused {
            return false;
        }
        let started = Instant::now();
        let mut ran = false;
        if self.speed == Speed::Max && self.world.busy() {
            while self.world.busy() && started.elapsed() < budget && !yield_now() {
                if !self.world.step() {
                    break;
                }
                self.events_run += 1;
                ran = true;
            }
            self.reanchor();
            return ran;
        }
        let target = self.target();
        let mut caught_up = true;
        while let Some(t) = self.world.next_event_time() {
            if t > target {
                break;
            }
            if started.elapsed() >= budget || yield_now() {
                caught_up = false;
                break;
            }
            self.world.step();
            self.events_run += 1;
            ran = true;
        }
        if caught_up {
            self.world.runtime_mut().advance_clock(target);
        }
        ran
    }

    /// Runs `count` events now (paused or not); returns how many ran.
    pub fn step_events(&mut self, count: u64) -> u64 {
        let mut n = 0;
        while n < count && self.world.step() {
            n += 1;
        }
        self.events_run += n;
        self.reanchor();
        n
    }

    /// Runs every event in the next `duration` of virtual time and moves the clock there.
    pub fn step_for(&mut self, duration: Millis) -> u64 {
        let until = self.world.now() + duration;
        let mut n = 0;
        while self.world.next_event_time().is_some_and(|t| t <= until) {
            self.world.step();
            n += 1;
        }
        self.world.runtime_mut().advance_clock(until);
        self.events_run += n;
        self.reanchor();
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_parse() {
        assert_eq!(Speed::parse("max").unwrap(), Speed::Max);
        assert_eq!(Speed::parse("2.5").unwrap(), Speed::Factor(2.5));
        assert_eq!(Speed::parse("10x").unwrap(), Speed::Factor(10.0));
        assert!(Speed::parse("0").is_err());
        assert!(Speed::parse("fast").is_err());
    }

    #[test]
    fn stepping_a_paused_world_moves_virtual_time_exactly() {
        let mut world = World::new(1);
        world.add_default_nodes();
        let mut sim = Sim::new(world, Speed::Factor(1.0), true);
        sim.step_for(5_000);
        assert_eq!(sim.world.now(), 5_000);
        assert_eq!(sim.target(), 5_000);
        assert!(!sim.advance(Duration::from_millis(10), &|| false), "paused clocks do not run");
    }
}
