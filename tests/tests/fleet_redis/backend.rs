//! The Redis backend's errors: bad URLs, an unreachable server, refused credentials, a server
//! or user without scripting, arguments the script refuses, a corrupt stored state; and the
//! pipelined sync of several scopes.

use retry_core::fleet::FleetError;
use retry_core::fleet::keys::ScopeKeys;
use retry_core::fleet::protocol::{
    Dropped, Lease, MAX_COUNT, MAX_TIME_MS, ProcessId, Reply, Report, Settings, encode_args,
};
use retry_core::fleet::redis::{RedisStore, STORE_SCRIPT};
use retry_core::fleet::store_model::{leave, step};
use retry_core::fleet::store_state::StoreState;
use retry_tests::redis_server::{RedisServer, Resp, free_port};

use super::{add_acl_users, lease_of, options, server};

fn report(id: u64, now_ms: u64) -> Report {
    Report {
        process: ProcessId(id),
        now_ms,
        ..Report::default()
    }
}

#[tokio::test]
async fn urls_that_are_not_redis_urls_are_refused_with_what_to_write() {
    for url in [
        "http://127.0.0.1:6379/",
        "127.0.0.1:6379",
        "redis://127.0.0.1:notaport/",
    ] {
        let error = RedisStore::connect(url, options())
            .await
            .expect_err("not a Redis URL");
        assert!(
            matches!(error, FleetError::InvalidUrl { .. }),
            "{url}: {error}"
        );
    }
    let error = RedisStore::connect("ftp://app:s3cret@db/", options())
        .await
        .expect_err("not a Redis URL");
    let message = error.to_string();
    assert!(message.contains("redis://host:port/"), "{message}");
    assert!(!message.contains("s3cret"), "the password shows: {message}");
}

#[tokio::test]
async fn an_unreachable_server_is_an_error_at_start_up_not_a_hang() {
    let url = format!("redis://127.0.0.1:{}/", free_port());
    let error = RedisStore::connect(&url, options())
        .await
        .expect_err("nothing listens");
    assert!(matches!(error, FleetError::Unreachable { .. }), "{error}");
    assert!(error.to_string().contains(&url), "{error}");
}

#[tokio::test]
async fn a_wrong_password_is_an_authentication_error_without_the_password() {
    let Some(server) = server(&[]) else { return };
    add_acl_users(&server);
    RedisStore::connect(&server.url_as("app", "right"), options())
        .await
        .expect("the right password");
    let error = RedisStore::connect(&server.url_as("app", "wrong"), options())
        .await
        .expect_err("the wrong password");
    assert!(
        matches!(error, FleetError::Authentication { .. }),
        "{error}"
    );
    assert!(!error.to_string().contains("wrong@"), "{error}");
}

#[tokio::test]
async fn a_user_without_scripting_is_told_what_fleet_mode_needs() {
    let Some(server) = server(&[]) else { return };
    add_acl_users(&server);
    let error = RedisStore::connect(&server.url_as("noscript", "pw"), options())
        .await
        .expect_err("no scripting");
    assert!(matches!(error, FleetError::NoScripting { .. }), "{error}");
    assert!(error.to_string().contains("+@scripting"), "{error}");
}

#[tokio::test]
async fn a_server_with_scripting_renamed_away_is_told_what_fleet_mode_needs() {
    let renamed = [
        "--rename-command",
        "SCRIPT",
        "",
        "--rename-command",
        "EVAL",
        "",
        "--rename-command",
        "EVALSHA",
        "",
    ];
    let Some(server) = server(&renamed) else {
        return;
    };
    let error = RedisStore::connect(&server.url(), options())
        .await
        .expect_err("no scripting");
    assert!(matches!(error, FleetError::NoScripting { .. }), "{error}");
}

#[tokio::test]
async fn the_script_refuses_arguments_out_of_bounds() {
    let Some(server) = server(&[]) else { return };
    let keys = ScopeKeys::new("retry:", "args").expect("valid");
    let args = encode_args(&Settings::example(), &report(1, 1_000)).expect("valid");
    let run = |args: &[String]| {
        let mut command = vec!["EVAL", STORE_SCRIPT, "3"];
        command.extend(keys.all());
        command.extend(args.iter().map(String::as_str));
        server.command(&command)
    };
    assert!(matches!(run(&args), Resp::Array(_)), "valid arguments run");
    let cases = [
        (4, (MAX_COUNT + 1).to_string()),
        (4, "-1".to_owned()),
        (4, "1.5".to_owned()),
        (1, "ZZ".to_owned()),
        // The span: past the protocol's clock.
        (14, (MAX_TIME_MS + 1).to_string()),
        // The settings: beta, young over most, a short hash.
        (22, "0".to_owned()),
        (16, "5001".to_owned()),
        (23, "00".to_owned()),
        (15, "060000".to_owned()),
    ];
    for (index, value) in cases {
        let mut bad = args.clone();
        bad[index] = value.clone();
        let named = format!("retry-fleet: argument {}", index + 1);
        match run(&bad) {
            Resp::Error(message) => assert!(message.contains(&named), "{message}"),
            other => panic!("argument {index} = {value}: {other:?}"),
        }
    }
    let mut bad = args.clone();
    bad[0] = "2".to_owned();
    match run(&bad) {
        Resp::Error(message) => assert!(message.contains("protocol 1 expected"), "{message}"),
        other => panic!("protocol 2: {other:?}"),
    }
    match run(&args[..23]) {
        Resp::Error(message) => assert!(message.contains("24 arguments"), "{message}"),
        other => panic!("23 arguments: {other:?}"),
    }
}

/// A store connected to `server` and a scope `name` on it, after process 1's first report
/// (at 1 s): the store, the scope's keys and the lease it got.
async fn first_report(server: &RedisServer, name: &str) -> (RedisStore, ScopeKeys, Lease) {
    let store = RedisStore::connect(&server.url(), options())
        .await
        .expect("connects");
    let keys = ScopeKeys::new("retry:", name).expect("valid");
    let reply = store
        .sync_once(&keys, &Settings::example(), &report(1, 1_000))
        .await
        .expect("synced");
    (store, keys, lease_of(reply))
}

#[tokio::test]
async fn a_corrupt_stored_state_is_dropped_and_relearned() {
    let Some(server) = server(&[]) else { return };
    let (store, keys, first) = first_report(&server, "corrupt").await;
    let settings = Settings::example();
    // Someone writes a pool of a billion tokens, in a form the script never writes.
    server.command(&["HSET", keys.state(), "pool", "1e9"]);
    let again = Report {
        known_born_ms: first.born_ms,
        held: 500,
        ..report(1, 2_000)
    };
    let reply = store
        .sync_once(&keys, &settings, &again)
        .await
        .expect("synced");
    // The state was dropped and re-learned from the report, and said dropped: nothing granted.
    let lease = lease_of(reply);
    assert_eq!((lease.grant, lease.dropped), (0, Dropped::State));
    let state = store.read_state(&keys).await.expect("readable");
    let fleet = state.fleet().expect("a state");
    assert_eq!((fleet.pool, fleet.leased), (0, 500));
    // The fields an earlier script of the protocol did not write are garbage alike when present
    // in another form.
    for field in [
        "departed_demand",
        "tick_successes",
        "calls_failing",
        "tick_demand",
        "curve_paused",
        "expired_at",
        "rate_before_cuts",
        "recounted_at",
        "tick_span",
    ] {
        server.command(&["HSET", keys.state(), field, "1e9"]);
        let reply = store
            .sync_once(&keys, &settings, &again)
            .await
            .expect("synced");
        assert_eq!(lease_of(reply).dropped, Dropped::State, "{field}");
    }
    // A flag the script stores as 0 or 1, stored as 2: the script compares it with both (before,
    // `engaged` at 2 was neither engaged nor not: the fleet's rate replied 0 with the flag 2,
    // which each process refused, every sync an error until a throttle cut the fleet).
    for field in ["engaged", "adopting", "cold_cut"] {
        server.command(&["HSET", keys.state(), field, "2"]);
        let reply = store.sync_once(&keys, &settings, &again).await;
        let dropped = reply.map(|reply| lease_of(reply).dropped);
        assert_eq!(dropped, Ok(Dropped::State), "{field}");
    }
    // Stored settings that no process could have sent (not `Settings::encode`'s form, or a
    // field out of `Settings::check`'s bounds): garbage too, not a conflict each process's
    // sync fails to read (before, every sync failed until the processes' leases expired).
    let beta_of_a_million = "60000,500,5000,14,1,1000,3000,1000000,0000000000000000";
    let young_over_most = "60000,5001,5000,14,1,1000,3000,900000,0000000000000000";
    let short_hash = "60000,500,5000,14,1,1000,3000,900000,00";
    // `Settings::encode`'s numbers have no leading zero: this form is a conflict whose settings
    // equal the process's own.
    let leading_zero = "060000,500,5000,14,1,1000,3000,900000,0000000000000000";
    for forged in [
        "garbage",
        beta_of_a_million,
        young_over_most,
        short_hash,
        leading_zero,
    ] {
        server.command(&["HSET", keys.state(), "settings", forged]);
        let reply = store.sync_once(&keys, &settings, &again).await;
        let dropped = reply.map(|reply| lease_of(reply).dropped);
        assert_eq!(dropped, Ok(Dropped::State), "{forged}");
    }
    // A corrupt record too.
    server.command(&["HSET", keys.procs(), "0000000000000001", "lots"]);
    let reply = store
        .sync_once(&keys, &settings, &again)
        .await
        .expect("synced");
    assert_eq!(lease_of(reply).grant, 0);
    assert!(store.read_state(&keys).await.is_ok());
}

/// A state hash in the script's own form whose values no report could have led to (out of
/// `FleetState::in_bounds`): garbage, dropped and re-learned, by the script as by the model
/// (whose `i64` products overflowed on some of them before).
#[tokio::test]
async fn a_stored_state_out_of_the_bounds_the_script_writes_is_dropped_as_the_model_drops_it() {
    let Some(server) = server(&[]) else { return };
    let (store, keys, first) = first_report(&server, "out-of-bounds").await;
    let settings = Settings::example();
    let beyond = (1_i64 << 53).to_string();
    let forgeries = [
        ("born", beyond.as_str()),
        ("now", beyond.as_str()),
        ("relearn_until", beyond.as_str()),
        ("tick_start", "-1"),
        ("cut_at", beyond.as_str()),
        ("pool", beyond.as_str()),
        ("leased", "-1"),
        ("retry_demand", "-1"),
        ("send_demand", "-1"),
        ("tick_calls", beyond.as_str()),
        ("tick_sends", beyond.as_str()),
        ("tick_throttles", beyond.as_str()),
        ("tick_successes", beyond.as_str()),
        // One over `store_state::MOST_TICK_REPORTS`.
        ("tick_reports", "1000000001"),
        ("last_sends", beyond.as_str()),
        ("last_throttles", beyond.as_str()),
        ("calls_rate", beyond.as_str()),
        ("send_rate", beyond.as_str()),
        ("admitted_rate", beyond.as_str()),
        ("w_max", beyond.as_str()),
        ("fleet_rate", beyond.as_str()),
        ("expired_at", beyond.as_str()),
        ("rate_before_cuts", beyond.as_str()),
        // Before minus the longest regain (`store_state::MOST_REGAIN_MS`), and longer than the
        // time since the cut.
        ("curve_paused", "-2925"),
        ("curve_paused", beyond.as_str()),
        // Times ten days after the store's clock (within `MAX_TIME_MS`): the script sets each
        // from its clock, at or before it (the end of re-learning two intervals after it).
        ("born", "864000000"),
        ("tick_start", "864000000"),
        ("cut_at", "864000000"),
        ("expired_at", "864000000"),
        ("relearn_until", "864000000"),
    ];
    for (now_ms, (field, value)) in (2_000..).step_by(1_000).zip(forgeries) {
        server.command(&["HSET", keys.state(), field, value]);
        let mut model = store.read_state(&keys).await.expect("readable");
        // A process leaving changes nothing: the next report's step drops the state.
        let left = store
            .leave(std::slice::from_ref(&keys), ProcessId(1))
            .await
            .expect("left");
        assert_eq!(left, [Ok(false)], "{field}");
        assert!(!leave(&mut model, ProcessId(1)), "{field}");
        let throttled = Report {
            known_born_ms: first.born_ms,
            sends: 60,
            throttles: 5,
            send_demand: 60_000,
            ..report(1, now_ms)
        };
        let reply = store
            .sync_once(&keys, &settings, &throttled)
            .await
            .expect("synced");
        assert_eq!(lease_of(reply).dropped, Dropped::State, "{field}");
        assert_eq!(
            step(&mut model, &settings, &throttled),
            Ok(reply),
            "{field}"
        );
        let state = store.read_state(&keys).await.expect("readable");
        assert_eq!(state, model, "{field}");
        let fleet = state.fleet().expect("re-learned");
        assert_eq!(
            (fleet.born_ms, fleet.pool),
            (first.born_ms as i64, 0),
            "{field}"
        );
    }
}

/// A sum of the state raised by another client (the records left as they were) is garbage
/// once the store counts its sums again from the records, a lease after the last count: the
/// script and the model drop it at the same report.
#[tokio::test]
async fn sums_that_disagree_with_the_records_are_dropped_a_lease_on_as_the_model_drops_them() {
    let Some(server) = server(&[]) else { return };
    let settings = Settings::example();
    for field in ["send_demand", "retry_demand", "leased"] {
        let (store, keys, first) = first_report(&server, &format!("sums-{field}")).await;
        server.command(&["HINCRBY", keys.state(), field, "1125899906842624"]);
        let mut model = store.read_state(&keys).await.expect("readable");
        let mut dropped = Vec::new();
        for now_ms in [2_000, 3_000, 4_000, 5_000] {
            let again = Report {
                known_born_ms: first.born_ms,
                held: 500,
                send_demand: 60_000,
                ..report(1, now_ms)
            };
            let reply = store
                .sync_once(&keys, &settings, &again)
                .await
                .expect("synced");
            assert_eq!(step(&mut model, &settings, &again), Ok(reply), "{field}");
            assert_eq!(store.read_state(&keys).await.expect("readable"), model);
            dropped.push(lease_of(reply).dropped);
        }
        // The first report at 1 s counted; the lease is 3 s.
        let expected = [
            Dropped::Nothing,
            Dropped::Nothing,
            Dropped::State,
            Dropped::Nothing,
        ];
        assert_eq!(dropped, expected, "{field}");
    }
}

#[tokio::test]
async fn forged_records_and_keys_of_another_type_are_a_lost_state_relearned() {
    let Some(server) = server(&[]) else { return };
    let (store, keys, first) = first_report(&server, "forged").await;
    let settings = Settings::example();
    let again = |now_ms| Report {
        known_born_ms: first.born_ms,
        held: 500,
        send_demand: 60_000,
        ..report(1, now_ms)
    };
    // Another client writes a record in the script's own form with a send demand no process
    // could have reported (over MAX_RATE): garbage, not data.
    server.command(&[
        "HSET",
        keys.procs(),
        "0000000000000001",
        "500:0:0:1000000000000",
    ]);
    let mut model = store.read_state(&keys).await.expect("readable");
    let reply = store
        .sync_once(&keys, &settings, &again(2_000))
        .await
        .expect("synced");
    // The model, from the same forged state, gives the same reply and state.
    assert_eq!(step(&mut model, &settings, &again(2_000)), Ok(reply));
    let state = store.read_state(&keys).await.expect("readable");
    assert_eq!(state, model);
    let lease = lease_of(reply);
    assert_eq!((lease.grant, lease.born_ms), (0, first.born_ms));
    assert_eq!(state.fleet().expect("a state").send_demand, 60_000);
    // Another client marks process 2 seen ten days after the store's clock: it would never
    // expire, its share kept from the others. Garbage, by the script as by the model.
    let second = Report {
        known_born_ms: first.born_ms,
        ..report(2, 2_500)
    };
    store
        .sync_once(&keys, &settings, &second)
        .await
        .expect("synced");
    server.command(&["ZADD", keys.seen(), "864002500", "0000000000000002"]);
    let mut model = store.read_state(&keys).await.expect("readable");
    let reply = store
        .sync_once(&keys, &settings, &again(2_800))
        .await
        .expect("synced");
    assert_eq!(lease_of(reply).dropped, Dropped::ProcessRecord);
    assert_eq!(step(&mut model, &settings, &again(2_800)), Ok(reply));
    assert_eq!(store.read_state(&keys).await.expect("readable"), model);
    // Another client removes process 2's `seen` entry and leaves its record: it would never
    // expire (expiry walks `seen`), its share kept from the others, and the sums, which hold
    // its record, agree with the records. The model cannot hold such a state (the codec
    // refuses it); the script drops it at its next recount of the sums, a lease (3 s) after
    // the re-learned state's first at 2.8 s.
    store
        .sync_once(&keys, &settings, &second)
        .await
        .expect("synced");
    server.command(&["ZREM", keys.seen(), "0000000000000002"]);
    assert!(
        store.read_state(&keys).await.is_err(),
        "the codec refuses it"
    );
    let mut dropped = Vec::new();
    for now_ms in [3_800, 4_800, 5_800] {
        let reply = store
            .sync_once(&keys, &settings, &again(now_ms))
            .await
            .expect("synced");
        dropped.push(lease_of(reply).dropped);
    }
    assert_eq!(
        dropped,
        [Dropped::Nothing, Dropped::Nothing, Dropped::State]
    );
    assert!(store.read_state(&keys).await.is_ok());
    // Each of the three keys overwritten with a value of another type: the state is lost and
    // re-learned, the sync is no error.
    for (key, kind) in [
        (keys.state(), "SET"),
        (keys.procs(), "SET"),
        (keys.seen(), "HSET"),
    ] {
        server.command(&["DEL", key]);
        let written = if kind == "SET" {
            server.command(&["SET", key, "garbage"])
        } else {
            server.command(&["HSET", key, "garbage", "1"])
        };
        assert!(!matches!(written, Resp::Error(_)), "{key}: {written:?}");
        let reply = store
            .sync_once(&keys, &settings, &again(3_000))
            .await
            .unwrap_or_else(|error| panic!("{key} as another type: {error}"));
        let lease = lease_of(reply);
        assert_eq!((lease.grant, lease.born_ms), (0, first.born_ms), "{key}");
        assert!(store.read_state(&keys).await.is_ok(), "{key}");
    }
}

#[tokio::test]
async fn several_scopes_sync_in_one_pipeline_as_they_would_one_by_one() {
    let Some(server) = server(&[]) else { return };
    let store = RedisStore::connect(&server.url(), options())
        .await
        .expect("connects");
    let scopes: Vec<ScopeKeys> = ["a", "b {c}", "ü"]
        .iter()
        .map(|name| ScopeKeys::new("retry:", name).expect("valid"))
        .collect();
    let settings = Settings::example();
    let mut models = vec![StoreState::default(); scopes.len()];
    for round in 0..3_u64 {
        if round == 2 {
            // The server lost the script: the pipeline's NOSCRIPTs are sent again by EVAL.
            assert_eq!(
                server.command(&["SCRIPT", "FLUSH"]),
                Resp::Status("OK".into())
            );
        }
        let reports: Vec<Report> = (0..3_u64)
            .map(|i| Report {
                calls: 5 * i,
                tokens_wanted: i,
                ..report(i + 1, 1_000 + round * 1_000)
            })
            .collect();
        let batch: Vec<_> = scopes
            .iter()
            .zip(&reports)
            .map(|(keys, report)| (keys, &settings, report))
            .collect();
        let replies = store.sync_many(&batch).await.expect("one round trip");
        for ((reply, model), report) in replies.into_iter().zip(&mut models).zip(&reports) {
            let expected = step(model, &settings, report).expect("valid");
            assert_eq!(reply.expect("synced"), expected);
        }
    }
    // Every scope's keys expire by themselves if its fleet goes away.
    let Resp::Int(ttl) = server.command(&["PTTL", scopes[1].state()]) else {
        panic!("PTTL")
    };
    assert!(ttl > 0, "{ttl}");
    // A report out of bounds fails alone.
    let bad = Report {
        calls: MAX_COUNT + 1,
        ..report(7, 5_000)
    };
    let good = report(8, 5_000);
    let batch = [
        (&scopes[0], &settings, &bad),
        (&scopes[1], &settings, &good),
    ];
    let replies = store.sync_many(&batch).await.expect("one round trip");
    assert!(matches!(replies[0], Err(FleetError::Protocol(_))));
    assert!(matches!(replies[1], Ok(Reply::Lease(_))));
}
