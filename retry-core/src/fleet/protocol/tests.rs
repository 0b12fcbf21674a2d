use std::time::Duration;

use super::*;

fn lease_items() -> Vec<ReplyItem> {
    Reply::Lease(Lease {
        grant: 90,
        cap: 500,
        live: 2,
        born_ms: 1_000,
        now_ms: 2_000,
        engaged: true,
        fleet_rate: 450_000,
        share_ppm: 500_000,
        send_rate: 225_000,
        fleet_tokens: 400,
        dropped: Dropped::ProcessRecord,
    })
    .encode()
}

fn held(held: u64) -> Report {
    Report {
        now_ms: 2_000,
        held,
        ..Report::default()
    }
}

fn decode(items: &[ReplyItem]) -> Result<Reply, ProtocolError> {
    Reply::decode(items, &Settings::example(), &held(10))
}

/// `lease_items()` with item `index` replaced by `value`: the field its error names.
fn refused(index: usize, value: ReplyItem) -> &'static str {
    let mut items = lease_items();
    items[index] = value;
    decode(&items).expect_err("out of bounds").field()
}

#[test]
fn a_lease_round_trips() {
    let items = lease_items();
    let reply = decode(&items).expect("valid");
    assert_eq!(reply.encode(), items);
}

#[test]
fn a_conflict_carries_the_stored_settings() {
    let stored = Settings {
        most: 2_000,
        ..Settings::example()
    };
    let reply = decode(&Reply::Conflict(stored).encode()).expect("valid");
    assert_eq!(reply, Reply::Conflict(stored));
    let garbled = [
        ReplyItem::Int(1),
        ReplyItem::Int(1),
        ReplyItem::Text("60000,500,5000".into()),
    ];
    assert_eq!(decode(&garbled).expect_err("garbled").field(), "settings");
}

#[test]
fn a_hostile_reply_cannot_grant_beyond_the_cap_or_below_nothing() {
    use ReplyItem::Int;
    // held 10, cap 500: grants within -10..=490.
    assert_eq!(refused(2, Int(491)), "grant");
    assert_eq!(refused(2, Int(-11)), "grant");
    assert_eq!(refused(2, Int(i64::MAX)), "grant");
    assert_eq!(refused(2, Int(i64::MIN)), "grant");
    // The cap itself never above the settings' most.
    assert_eq!(refused(3, Int(5_001)), "cap");
    assert_eq!(refused(3, Int(-1)), "cap");
}

#[test]
fn a_hostile_reply_cannot_give_a_negative_share_or_a_rate_out_of_bounds() {
    use ReplyItem::{Int, Text};
    assert_eq!(refused(9, Int(-1)), "share_ppm");
    assert_eq!(refused(9, Int(1_000_001)), "share_ppm");
    assert_eq!(refused(8, Int(499)), "fleet_rate");
    assert_eq!(refused(8, Int(1_000_000_001)), "fleet_rate");
    assert_eq!(refused(10, Int(225_001)), "send_rate");
    assert_eq!(refused(7, Int(2)), "engaged");
    assert_eq!(refused(4, Int(0)), "live");
    assert_eq!(refused(6, Int(1_999)), "now_ms",);
    assert_eq!(refused(5, Int(2_001)), "born_ms");
    assert_eq!(refused(2, Text("90".into())), "grant");
    // The fleet's tokens within 0..=cap.
    assert_eq!(refused(11, Int(501)), "fleet_tokens");
    assert_eq!(refused(11, Int(-1)), "fleet_tokens");
    // What was dropped: 0, 1 or 2.
    assert_eq!(refused(12, Int(3)), "dropped");
    assert_eq!(refused(12, Int(-1)), "dropped");
}

#[test]
fn a_store_clock_far_ahead_of_the_process_is_refused_and_says_what_to_check() {
    use ReplyItem::Int;
    // The report's clock is 2,000 ms: the store's may lead it by 10 s, not a millisecond more.
    let lead = |now_ms: u64| {
        let mut items = lease_items();
        items[6] = Int(i64::try_from(now_ms).expect("small"));
        decode(&items)
            .expect("within the protocol's bounds")
            .check_clock(&held(10), Duration::ZERO)
    };
    let most = 2_000 + MOST_STORE_CLOCK_LEAD_MS;
    assert_eq!(lead(most), Ok(()));
    let error = lead(most + 1).expect_err("a millisecond over");
    assert_eq!(error.field(), "now_ms");
    let message = error.to_string();
    assert!(
        message.contains("12001") && message.contains("clocks"),
        "{message}"
    );
    // An hour ahead, and the latest time a process may report: refused alike.
    assert_eq!(
        lead(2_000 + 3_600_000).expect_err("an hour").field(),
        "now_ms"
    );
    assert_eq!(lead(MAX_TIME_MS).expect_err("the latest").field(), "now_ms");
    // A conflict has no clock.
    let conflict = Reply::Conflict(Settings::example());
    assert_eq!(conflict.check_clock(&held(10), Duration::ZERO), Ok(()));
    // A reply that took 3 s to come back may lead the report by 3 s more: the process's clock
    // moved on while the store answered the others.
    let mut items = lease_items();
    items[6] = Int(i64::try_from(most + 3_000).expect("small"));
    let late = decode(&items).expect("within the protocol's bounds");
    assert_eq!(late.check_clock(&held(10), Duration::from_secs(3)), Ok(()));
    let error = late.check_clock(&held(10), Duration::from_millis(2_999));
    assert_eq!(error.expect_err("a millisecond over").field(), "now_ms");
}

#[test]
fn a_reply_of_another_shape_or_version_is_an_error_not_a_panic() {
    use ReplyItem::Int;
    assert_eq!(decode(&[]).expect_err("empty").field(), "version");
    assert_eq!(
        decode(&[Int(2), Int(0)]).expect_err("v2").field(),
        "version"
    );
    assert_eq!(decode(&[Int(1), Int(7)]).expect_err("code").field(), "code");
    let short = &lease_items()[..12];
    assert_eq!(decode(short).expect_err("short").field(), "reply length");
}

#[test]
fn the_arguments_are_checked_before_they_are_sent() {
    let report = Report {
        now_ms: MAX_TIME_MS + 1,
        ..Report::default()
    };
    let error = encode_args(&Settings::example(), &report).expect_err("too late");
    assert_eq!(error.field(), "now_ms");
    let settings = Settings {
        lease_ttl_ms: 999,
        ..Settings::example()
    };
    let error = encode_args(&settings, &Report::default()).expect_err("ttl < interval");
    assert_eq!(error.field(), "lease_ttl_ms");
}

#[test]
fn the_arguments_follow_the_declaration_order() {
    let report = Report {
        process: ProcessId(0xab),
        now_ms: 3,
        known_born_ms: 4,
        calls: 5,
        first_try_successes: 6,
        held: 7,
        tokens_wanted: 8,
        tokens_granted: 9,
        tokens_returned: 10,
        sends: 11,
        throttles: 12,
        send_demand: 13,
        known_fleet_rate: 14,
        span_ms: 15,
    };
    let args = encode_args(&Settings::example(), &report).expect("valid");
    let numbers: Vec<&str> = args[2..15].iter().map(String::as_str).collect();
    assert_eq!(args[1], "00000000000000ab");
    assert_eq!(
        numbers,
        [
            "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15"
        ]
    );
    assert_eq!(args[15..].join(","), Settings::example().encode());
}
