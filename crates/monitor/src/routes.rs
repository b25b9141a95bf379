//! Where each interval of `storlab monitor` goes: the Prometheus server
//! (`--listen`), the timeline kept for `--record` (the results database)
//! and `--output-format json`, and the display (its text, from
//! [`Formatter`]; the front end writes it).

use crate::display::Formatter;
use crate::prometheus::{self, MetricsServer};
use crate::{Interval, Layer, TimelineBuilder};
use std::time::Duration;
use storlab_types::MonitorTimeline;

/// Hands each interval to everyone who takes it.
#[derive(Debug)]
pub struct Routes {
    formatter: Formatter,
    server: Option<MetricsServer>,
    builder: Option<TimelineBuilder>,
    /// Whether the whole timeline is kept (only when it is wanted, so a
    /// long-running exporter does not grow without bound).
    keep_timeline: bool,
    interval: Duration,
    layer: Layer,
    /// The devices selected (none: every device of the first interval).
    devices: Option<Vec<String>>,
    /// Intervals handled.
    pub done: u64,
}

impl Routes {
    pub fn new(
        formatter: Formatter,
        server: Option<MetricsServer>,
        keep_timeline: bool,
        (interval, layer): (Duration, Layer),
        devices: Option<Vec<String>>,
    ) -> Routes {
        Routes {
            formatter,
            server,
            builder: None,
            keep_timeline,
            interval,
            layer,
            devices,
            done: 0,
        }
    }

    /// Whether a Prometheus server takes the intervals.
    pub fn serving(&self) -> bool {
        self.server.is_some()
    }

    /// Hand one interval to the server and the timeline (`first_wall`: the
    /// wall-clock time of the first snapshot), and return the display's
    /// text when `display` (empty: nothing to write).
    pub fn interval(
        &mut self,
        i: &Interval,
        first_wall: Option<String>,
        display: bool,
    ) -> Result<String, serde_json::Error> {
        self.done += 1;
        if let Some(s) = &self.server {
            s.update(prometheus::render(i, self.layer.as_str()));
        }
        if self.keep_timeline {
            let (interval, layer) = (self.interval, self.layer);
            let devices = self.devices.clone();
            self.builder
                .get_or_insert_with(|| {
                    TimelineBuilder::new(
                        first_wall.unwrap_or_default(),
                        interval,
                        layer,
                        devices.unwrap_or_else(|| {
                            i.devices.iter().map(|d| d.device.clone()).collect()
                        }),
                    )
                })
                .add(i);
        }
        if display {
            self.formatter.interval(i)
        } else {
            Ok(String::new())
        }
    }

    /// The timeline of every interval (empty when none was kept).
    pub fn timeline(&mut self, started_at: String) -> MonitorTimeline {
        self.builder.take().map(|b| b.finish()).unwrap_or_else(|| {
            TimelineBuilder::new(started_at, self.interval, self.layer, Vec::new()).finish()
        })
    }
}
