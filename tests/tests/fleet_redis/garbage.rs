//! Issue 25 item 5: a stored record no process could have written is garbage the store drops
//! (see `backend::forged_records_and_keys_of_another_type_are_a_lost_state_relearned`), and the
//! process whose sync dropped it says so: a warning naming the scope and what was dropped,
//! `FleetStats::garbage_dropped`, the `retry.fleet.garbage` counter. Every process keeps
//! serving.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use retry_core::RetryConfig;
use retry_core::fleet::{FleetErrorKind, FleetStatus};
use tracing_subscriber::fmt::MakeWriter;

use super::{
    ErrorKind, INTERVAL, Resp, attached, call, fleet_stats, process, scraped, server,
    wait_for_status, wait_until,
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
        self.lines_with("fleet store dropped garbage")
    }

    /// The lines that contain `text`.
    fn lines_with(&self, text: &str) -> Vec<String> {
        self.text()
            .lines()
            .filter(|line| line.contains(text))
            .map(str::to_owned)
            .collect()
    }

    /// A subscriber at `WARN` that writes here.
    fn subscriber(&self) -> impl tracing::Subscriber + Send + Sync + use<> {
        tracing_subscriber::fmt()
            .with_writer(self.clone())
            .with_ansi(false)
            .with_max_level(tracing::Level::WARN)
            .finish()
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
    // The test's runtime runs the sync tasks on this thread: the subscriber sees their events.
    let _guard = tracing::subscriber::set_default(logs.subscriber());
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
    let garbage_counted = || scraped(&scrape, "retry_fleet_garbage", &["scope=\"forged\""]);
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

/// The store's clock is the latest any process reported: another client that writes the
/// state's `now` an hour ahead (as a host whose clock runs an hour ahead does, then stops)
/// stops the store's time for every other process for that hour. No tick ends, no throttle
/// cuts the fleet; before the refusal the process stayed `Live` on that frozen state. It now
/// refuses the replies (`protocol::MOST_STORE_CLOCK_LEAD_MS`), falls back to local limits when
/// its lease expires, says why once and counts each refused sync, serves its calls, and takes
/// leases again once the store's clock agrees with its own (here: the state deleted,
/// re-learned).
#[tokio::test]
async fn a_store_clock_an_hour_ahead_is_refused_until_the_clocks_agree() {
    let Some(server) = server(&[]) else { return };
    let logs = Logs::default();
    let _guard = tracing::subscriber::set_default(logs.subscriber());
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    let scrape = recorder.handle();
    let refused_syncs = || {
        let labels = ["scope=\"ahead\"", "result=\"refused\""];
        scraped(&scrape, "retry_fleet_syncs", &labels).unwrap_or(0.0)
    };
    let fleet = process(&server.url(), 1).await;
    let strategy = metrics::with_local_recorder(&recorder, || {
        attached(&fleet, "ahead", &RetryConfig::default())
    });
    wait_for_status(&strategy, FleetStatus::Live).await;
    tokio::time::sleep(3 * INTERVAL).await;
    assert_eq!(logs.lines_with("fleet reply refused"), Vec::<String>::new());
    assert_eq!(refused_syncs(), 0.0);

    let an_hour_ahead = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_millis()
        + 3_600_000;
    let forged = server.command(&[
        "HSET",
        "retry:{ahead}:v1:state",
        "now",
        &an_hour_ahead.to_string(),
    ]);
    assert_eq!(forged, Resp::Int(0), "the field was there: overwritten");
    wait_for_status(&strategy, FleetStatus::Fallback).await;
    let stats = fleet_stats(&strategy);
    assert_eq!(stats.last_error, Some(FleetErrorKind::Protocol));
    let error = fleet.last_error().expect("the error kept").to_string();
    assert!(
        error.contains("now_ms") && error.contains("clocks"),
        "{error}"
    );
    // Refused at every sync, said once, each counted.
    let refused_before = refused_syncs();
    tokio::time::sleep(5 * INTERVAL).await;
    let refusals = logs.lines_with("fleet reply refused");
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert!(
        refused_syncs() >= refused_before + 3.0,
        "{refused_before} -> {}",
        refused_syncs()
    );
    assert!(refusals[0].contains("scope=\"ahead\""), "{refusals:?}");
    assert!(
        call(&strategy, 1, ErrorKind::Transient),
        "served on local limits"
    );

    // The clocks agree again (the operator deleted the forged state): leases again.
    assert_eq!(
        server.command(&["DEL", "retry:{ahead}:v1:state"]),
        Resp::Int(1)
    );
    wait_for_status(&strategy, FleetStatus::Live).await;
}
