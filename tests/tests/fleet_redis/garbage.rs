//! Issue 25 item 5: a stored record no process could have written is garbage the store drops
//! (see `backend::forged_records_and_keys_of_another_type_are_a_lost_state_relearned`), and the
//! process whose sync dropped it says so: a warning naming the scope and what was dropped,
//! `FleetStats::garbage_dropped`, the `retry.fleet.garbage` counter. Every process keeps
//! serving.

use std::io;
use std::sync::{Arc, Mutex};

use retry_core::RetryConfig;
use retry_core::fleet::FleetStatus;
use tracing_subscriber::fmt::MakeWriter;

use super::{
    ErrorKind, INTERVAL, Resp, attached, call, fleet_stats, process, server, wait_for_status,
    wait_until,
};

/// What the test's subscriber wrote.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Logs {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("not poisoned")).into_owned()
    }

    /// The lines of the garbage warning.
    fn garbage_warnings(&self) -> Vec<String> {
        self.text()
            .lines()
            .filter(|line| line.contains("fleet store dropped garbage"))
            .map(str::to_owned)
            .collect()
    }
}

impl io::Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .expect("not poisoned")
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Logs {
    type Writer = Logs;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

#[tokio::test]
async fn a_forged_record_is_warned_of_counted_and_the_processes_keep_serving() {
    let Some(server) = server(&[]) else { return };
    let logs = Logs::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::WARN)
        .finish();
    // The test's runtime runs the sync tasks on this thread: the subscriber sees their events.
    let _guard = tracing::subscriber::set_default(subscriber);
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    let scrape = recorder.handle();
    let config = RetryConfig::default();
    let (one, two) = (
        process(&server.url(), 1).await,
        process(&server.url(), 2).await,
    );
    // The scopes' metric handles are made when they are linked, under this recorder: both
    // count in the one series of the scope.
    let first = metrics::with_local_recorder(&recorder, || attached(&one, "forged", &config));
    let second = metrics::with_local_recorder(&recorder, || attached(&two, "forged", &config));
    let dropped = || fleet_stats(&first).garbage_dropped + fleet_stats(&second).garbage_dropped;
    wait_for_status(&first, FleetStatus::Live).await;
    wait_for_status(&second, FleetStatus::Live).await;
    let garbage_counted = || {
        let prefix = "retry_fleet_garbage{scope=\"forged\"} ";
        scrape
            .render()
            .lines()
            .find_map(|line| line.strip_prefix(prefix).map(str::to_owned))
            .map(|value| value.parse::<f64>().expect("a number"))
    };
    // Several clean syncs: nothing dropped, nothing said.
    tokio::time::sleep(3 * INTERVAL).await;
    assert_eq!(dropped(), 0);
    assert_eq!(logs.garbage_warnings(), Vec::<String>::new());
    assert_eq!(garbage_counted().unwrap_or(0.0), 0.0);

    // Another client writes the second process's record in the script's own form, with a send
    // demand no process could have reported (over MAX_RATE).
    let forged = server.command(&[
        "HSET",
        "retry:{forged}:v1:procs",
        "0000000000000002",
        "500:0:0:1000000000000",
    ]);
    assert_eq!(forged, Resp::Int(0), "the record was there: overwritten");
    // The process whose sync meets it is told: the second, reporting with its record, or the
    // first, when its sync recounts the sums a lease after the last count (the record's demand
    // is in neither sum: `store_model::sums_recounted`).
    wait_until("a process told of the garbage", || dropped() == 1).await;
    let warnings = logs.garbage_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("WARN")
            && warnings[0].contains("scope=\"forged\"")
            && (warnings[0].contains("a process record")
                || warnings[0].contains("the scope's state")),
        "{warnings:?}"
    );
    assert_eq!(garbage_counted(), Some(1.0));
    // The state was re-learned; both processes keep their leases and serve calls, retries
    // included. Later clean syncs say nothing more.
    tokio::time::sleep(3 * INTERVAL).await;
    for strategy in [&first, &second] {
        assert_eq!(fleet_stats(strategy).status, FleetStatus::Live);
        assert!(
            call(strategy, 0, ErrorKind::Transient),
            "a first-try success"
        );
        assert!(call(strategy, 1, ErrorKind::Transient), "a retried success");
    }
    assert_eq!(dropped(), 1);
    assert_eq!(logs.garbage_warnings().len(), 1);
}
