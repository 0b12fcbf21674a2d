//! What a process tells the store at each sync ([`Report`], under its scope's [`Settings`]) and
//! what the store answers ([`Reply`]), as plain integers, with their encoding to the store
//! script's arguments and their decoding from its return array.
//!
//! Every number has a unit in its name or its doc and a bound ([`MAX_COUNT`], [`MAX_TOKENS`],
//! [`MAX_RATE`], [`MAX_TIME_MS`], ...): the bounds keep every product the store computes below
//! 2^53, where the script's numbers (Lua's doubles) are still exact integers. A report is checked
//! against them before it is sent ([`Report::check`], or [`Report::saturated`] to clamp counters
//! instead), and a reply is checked against them, and against the report it answers, when it is
//! decoded: nothing read from the store is trusted beyond its bounds ([`Reply::decode`]).

use std::fmt;
use std::time::Duration;

use super::error::ProtocolError;

/// The protocol's version: the first argument of every call and the first element of every
/// reply, and part of every key (`...:v1:state`), so that processes of a later version keep
/// their state apart from this one's while both run.
pub const PROTOCOL_VERSION: u32 = 1;

/// The most a count in a report may be (calls, successes, tokens wanted, granted or returned,
/// sends, throttles in one sync interval): `2^32 - 1`.
pub const MAX_COUNT: u64 = u32::MAX as u64;

/// The most tokens a process may hold, and the most any token setting may be: `2^32 - 1`, the
/// range of the local quota's level.
pub const MAX_TOKENS: u64 = u32::MAX as u64;

/// The most a rate may be, in thousandths of a request (or call) per second: a million requests
/// per second.
pub const MAX_RATE: u64 = 1_000_000_000;

/// The latest time a process may report, in Unix milliseconds (10^15 ms: the year 33658).
pub const MAX_TIME_MS: u64 = 1_000_000_000_000_000;

/// The most the store's clock may lead the clock of the process it replies to, in milliseconds:
/// 10 s. A lease whose `now_ms` leads the process's clock when it came (its report's clock
/// plus the time the reply took) by more is refused ([`Reply::check_clock`]).
///
/// The store's clock is the latest any process reported (see "Time" in [`fleet`](super)), so
/// one host whose clock runs ahead, or another client that wrote the state's `now`, carries it
/// ahead of every other process. While such a process reports, the store keeps time by its
/// clock; once it stops, the store's clock stands still until the others' clocks reach it: no
/// measurement tick ends, no throttle cuts the fleet's rate (a cut needs a sync interval since
/// the last one), no silent process expires, and the fleet's rate stays whatever it was,
/// throttled or not. Hosts kept by NTP agree within milliseconds (RFC 5905); 10 s is far over
/// that and under the 30 s the fleet holds a measured rate. A process refused for it keeps
/// syncing: its lease expires into local limits, its status and last error say so, and it
/// takes leases again once the clocks agree.
pub const MOST_STORE_CLOCK_LEAD_MS: u64 = 10_000;

/// The longest quota window and sync interval, in milliseconds (one hour): with [`MAX_RATE`]
/// the fleet's cap, `rate × window`, stays below 2^53.
pub const MAX_WINDOW_MS: u64 = 3_600_000;

/// The longest lease, in milliseconds (one day).
pub const MAX_LEASE_TTL_MS: u64 = 86_400_000;

/// The most a first-try success may give back, in tokens.
pub const MAX_SUCCESS_REWARD: u64 = 1_000_000;

/// One whole, in parts per million: shares and the limiter's `beta` are in these units.
pub const PPM: u64 = 1_000_000;

/// The least rate the fleet limiter allows, 500 thousandths of a request per second (0.5/s).
/// Source: the AWS SDKs' adaptive retry (`MIN_FILL_RATE = 0.5`, botocore and smithy-rs).
pub const MIN_FLEET_RATE: u64 = 500;

/// A process's identity in its fleet, chosen at random when the process starts; shown and
/// stored as 16 lowercase hexadecimal digits (so its textual order is its numeric order).
///
/// ```
/// use retry_core::fleet::protocol::ProcessId;
/// assert_eq!(ProcessId(0xbeef).to_string(), "000000000000beef");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ProcessId(pub u64);

impl fmt::Display for ProcessId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl ProcessId {
    /// Reads the 16 lowercase hexadecimal digits [`Display`](fmt::Display) writes.
    ///
    /// ```
    /// use retry_core::fleet::protocol::ProcessId;
    /// assert_eq!(ProcessId::parse("000000000000beef").unwrap(), ProcessId(0xbeef));
    /// assert!(ProcessId::parse("BEEF").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Self, ProtocolError> {
        parse_hex16(text)
            .map(Self)
            .ok_or_else(|| ProtocolError::new("process id", text, "16 lowercase hex digits"))
    }
}

/// The settings of a fleet scope that the store computes with, and a hash of every other
/// setting of the scope's retry configuration. Every report carries them: the store keeps the
/// first process's and answers a process whose settings differ with a conflict
/// ([`Reply::Conflict`]) that holds the stored ones, so that the process can name the setting
/// that differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Settings {
    /// The quota window, in milliseconds: the fleet's cap is its calls per second times this
    /// (`1..=MAX_WINDOW_MS`).
    pub window_ms: u64,
    /// What a new fleet's pool starts with, and the least its cap is while the fleet is
    /// younger than its window, in tokens (`..=most`; the AWS SDKs' 500).
    pub young_quota: u64,
    /// The most the fleet's cap may be, in tokens (`..=MAX_TOKENS`).
    pub most: u64,
    /// One retry's cost at the dearest retry cost, in tokens: the least a process with demand
    /// is given while the pool has it (`..=MAX_TOKENS`).
    pub retry_cost: u64,
    /// What a first-try success gives back, in tokens (`..=MAX_SUCCESS_REWARD`): it bounds
    /// what a process may claim to have earned since its last report.
    pub success_reward: u64,
    /// The sync interval, in milliseconds (`1..=MAX_WINDOW_MS`): the fleet's round trip, the
    /// store's measurement tick and the least time between two cuts of the fleet's rate.
    pub sync_interval_ms: u64,
    /// How long a silent process keeps its lease, in milliseconds (`sync_interval_ms..=
    /// MAX_LEASE_TTL_MS`): after it, the store forgets the process and its tokens.
    pub lease_ttl_ms: u64,
    /// The fleet limiter's multiplicative decrease, in parts per million (`1..PPM`): a cut sets
    /// the fleet's rate to `beta` times the rate the server admitted.
    pub beta_ppm: u64,
    /// A hash of the scope's other retry settings (attempts, costs, backoff, mode...), so that
    /// two processes that differ only there are told of it too.
    pub config_hash: u64,
}

impl Settings {
    /// Checks every field against its bound.
    ///
    /// ```
    /// use retry_core::fleet::protocol::Settings;
    /// let mut settings = Settings::example();
    /// assert!(settings.check().is_ok());
    /// settings.beta_ppm = 1_000_000;
    /// assert_eq!(
    ///     settings.check().unwrap_err().to_string(),
    ///     "fleet protocol: beta_ppm is 1000000, must be 1..=999999"
    /// );
    /// ```
    pub fn check(&self) -> Result<(), ProtocolError> {
        check_range("window_ms", self.window_ms, 1, MAX_WINDOW_MS)?;
        check_range("most", self.most, 0, MAX_TOKENS)?;
        check_range("young_quota", self.young_quota, 0, self.most)?;
        check_range("retry_cost", self.retry_cost, 0, MAX_TOKENS)?;
        check_range("success_reward", self.success_reward, 0, MAX_SUCCESS_REWARD)?;
        check_range("sync_interval_ms", self.sync_interval_ms, 1, MAX_WINDOW_MS)?;
        check_range(
            "lease_ttl_ms",
            self.lease_ttl_ms,
            self.sync_interval_ms,
            MAX_LEASE_TTL_MS,
        )?;
        check_range("beta_ppm", self.beta_ppm, 1, PPM - 1)
    }

    /// The settings as the store keeps them: the fields in declaration order, in decimal, the
    /// hash in 16 lowercase hexadecimal digits, separated by commas. Two settings are the same
    /// for the store when these strings are.
    ///
    /// ```
    /// use retry_core::fleet::protocol::Settings;
    /// assert_eq!(
    ///     Settings::example().encode(),
    ///     "60000,500,5000,14,1,1000,3000,900000,0000000000000000"
    /// );
    /// ```
    pub fn encode(&self) -> String {
        let mut text = self
            .numbers()
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        text.push(',');
        text.push_str(&ProcessId(self.config_hash).to_string());
        text
    }

    /// Reads what [`encode`](Self::encode) writes, checking every field.
    ///
    /// ```
    /// use retry_core::fleet::protocol::Settings;
    /// let settings = Settings::example();
    /// assert_eq!(Settings::parse(&settings.encode()).unwrap(), settings);
    /// assert!(Settings::parse("60000,500").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Self, ProtocolError> {
        let fields: Vec<&str> = text.split(',').collect();
        let [window, young, most, cost, reward, interval, ttl, beta, hash] = fields[..] else {
            return Err(ProtocolError::new(
                "settings",
                text,
                "9 comma-separated fields",
            ));
        };
        let settings = Self {
            window_ms: parse_decimal("window_ms", window)?,
            young_quota: parse_decimal("young_quota", young)?,
            most: parse_decimal("most", most)?,
            retry_cost: parse_decimal("retry_cost", cost)?,
            success_reward: parse_decimal("success_reward", reward)?,
            sync_interval_ms: parse_decimal("sync_interval_ms", interval)?,
            lease_ttl_ms: parse_decimal("lease_ttl_ms", ttl)?,
            beta_ppm: parse_decimal("beta_ppm", beta)?,
            config_hash: parse_hex16(hash).ok_or_else(|| {
                ProtocolError::new("config_hash", hash, "16 lowercase hex digits")
            })?,
        };
        settings.check()?;
        Ok(settings)
    }

    /// The names of the fields in which `self` and `other` differ (`config_hash` standing for
    /// every setting the store does not compute with), for the warning a conflict logs.
    ///
    /// ```
    /// use retry_core::fleet::protocol::Settings;
    /// let mine = Settings::example();
    /// let stored = Settings { most: 2_000, config_hash: 7, ..mine };
    /// assert_eq!(mine.differences(&stored), ["most", "config_hash"]);
    /// ```
    pub fn differences(&self, other: &Self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Self::NAMES
            .iter()
            .zip(self.numbers().iter().zip(other.numbers()))
            .filter(|(_, (mine, theirs))| **mine != *theirs)
            .map(|(name, _)| *name)
            .collect();
        if self.config_hash != other.config_hash {
            names.push("config_hash");
        }
        names
    }

    /// Settings for examples and tests: the crate's default quota (60 s window, 500 young,
    /// 5000 most, a retry at 14, a success giving 1), a 1 s sync interval, a 3 s lease and a
    /// beta of 0.9.
    pub fn example() -> Self {
        Self {
            window_ms: 60_000,
            young_quota: 500,
            most: 5_000,
            retry_cost: 14,
            success_reward: 1,
            sync_interval_ms: 1_000,
            lease_ttl_ms: 3_000,
            beta_ppm: 900_000,
            config_hash: 0,
        }
    }

    const NAMES: [&'static str; 8] = [
        "window_ms",
        "young_quota",
        "most",
        "retry_cost",
        "success_reward",
        "sync_interval_ms",
        "lease_ttl_ms",
        "beta_ppm",
    ];

    fn numbers(&self) -> [u64; 8] {
        [
            self.window_ms,
            self.young_quota,
            self.most,
            self.retry_cost,
            self.success_reward,
            self.sync_interval_ms,
            self.lease_ttl_ms,
            self.beta_ppm,
        ]
    }
}

/// What a process saw of one fleet scope since its last sync, and what it holds now.
///
/// Counts are since the last report whose reply the process received (a report whose reply
/// was lost is counted again in the next one).
///
/// Every field is one of the script's arguments, so the struct is exhaustive on purpose: a
/// new field changes what the store reads, a protocol change ([`PROTOCOL_VERSION`]), not an
/// addition a reader may ignore. Build one with `..Report::default()` for the fields a test
/// does not set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Report {
    /// Who reports.
    pub process: ProcessId,
    /// The process's clock, Unix milliseconds (`..=MAX_TIME_MS`).
    pub now_ms: u64,
    /// The store's birth time the process last received ([`Lease::born_ms`]), 0 if it never
    /// synced: a store that lost its state and hears of an older birth re-learns instead of
    /// starting a new fleet.
    pub known_born_ms: u64,
    /// Calls ended (`..=MAX_COUNT`).
    pub calls: u64,
    /// Calls that succeeded on their first attempt (`..=MAX_COUNT`).
    pub first_try_successes: u64,
    /// Tokens the process's quota holds now (`..=MAX_TOKENS`).
    pub held: u64,
    /// Tokens its retries asked for (`..=MAX_COUNT`): its retry demand.
    pub tokens_wanted: u64,
    /// Tokens its quota granted to retries (`..=MAX_COUNT`): what successes may have refunded.
    pub tokens_granted: u64,
    /// Tokens it gave back because a reply asked (a negative grant) (`..=MAX_COUNT`).
    pub tokens_returned: u64,
    /// Attempts sent (`..=MAX_COUNT`).
    pub sends: u64,
    /// Attempts the server throttled (`..=MAX_COUNT`).
    pub throttles: u64,
    /// The rate at which it wanted to send, in thousandths of a request per second
    /// (`..=MAX_RATE`): its send demand, throttled or delayed attempts included.
    pub send_demand: u64,
    /// The fleet's rate it last received ([`Lease::fleet_rate`]) while the fleet limiter was
    /// engaged, 0 otherwise (`..=MAX_RATE`): what a store that lost its state adopts.
    pub known_fleet_rate: u64,
    /// How long the report's counts span, milliseconds (`..=MAX_TIME_MS`): from the later of
    /// the process's last report and its scope's first response (one sync interval if neither
    /// is known); 0 until the scope has had traffic (nothing to count a rate over). The store
    /// counts the report's admissions over it and weighs its demand by it.
    pub span_ms: u64,
}

impl Report {
    /// Checks every field against its bound.
    ///
    /// ```
    /// use retry_core::fleet::protocol::Report;
    /// let report = Report { sends: 1 << 40, ..Report::default() };
    /// assert_eq!(
    ///     report.check().unwrap_err().to_string(),
    ///     "fleet protocol: sends is 1099511627776, must be 0..=4294967295"
    /// );
    /// ```
    pub fn check(&self) -> Result<(), ProtocolError> {
        check_range("now_ms", self.now_ms, 0, MAX_TIME_MS)?;
        check_range("known_born_ms", self.known_born_ms, 0, MAX_TIME_MS)?;
        check_range("held", self.held, 0, MAX_TOKENS)?;
        check_range("send_demand", self.send_demand, 0, MAX_RATE)?;
        check_range("known_fleet_rate", self.known_fleet_rate, 0, MAX_RATE)?;
        check_range("span_ms", self.span_ms, 0, MAX_TIME_MS)?;
        for (name, count) in self.counts() {
            check_range(name, count, 0, MAX_COUNT)?;
        }
        Ok(())
    }

    /// The report with every field clamped to its bound (a counter that overflowed one sync
    /// interval is reported at the most the protocol carries).
    ///
    /// ```
    /// use retry_core::fleet::protocol::{MAX_COUNT, Report};
    /// let report = Report { calls: u64::MAX, ..Report::default() }.saturated();
    /// assert_eq!(report.calls, MAX_COUNT);
    /// assert!(report.check().is_ok());
    /// ```
    pub fn saturated(self) -> Self {
        Self {
            process: self.process,
            now_ms: self.now_ms.min(MAX_TIME_MS),
            known_born_ms: self.known_born_ms.min(MAX_TIME_MS),
            calls: self.calls.min(MAX_COUNT),
            first_try_successes: self.first_try_successes.min(MAX_COUNT),
            held: self.held.min(MAX_TOKENS),
            tokens_wanted: self.tokens_wanted.min(MAX_COUNT),
            tokens_granted: self.tokens_granted.min(MAX_COUNT),
            tokens_returned: self.tokens_returned.min(MAX_COUNT),
            sends: self.sends.min(MAX_COUNT),
            throttles: self.throttles.min(MAX_COUNT),
            send_demand: self.send_demand.min(MAX_RATE),
            known_fleet_rate: self.known_fleet_rate.min(MAX_RATE),
            span_ms: self.span_ms.min(MAX_TIME_MS),
        }
    }

    fn counts(&self) -> [(&'static str, u64); 7] {
        [
            ("calls", self.calls),
            ("first_try_successes", self.first_try_successes),
            ("tokens_wanted", self.tokens_wanted),
            ("tokens_granted", self.tokens_granted),
            ("tokens_returned", self.tokens_returned),
            ("sends", self.sends),
            ("throttles", self.throttles),
        ]
    }
}

/// The script's arguments (`ARGV`) for one report: the protocol version, the report's fields
/// in the order of [`Report`]'s declaration (the process id in hexadecimal, the rest in
/// decimal), then the settings' fields in the order of [`Settings`]' declaration. Both are
/// checked first.
///
/// ```
/// use retry_core::fleet::protocol::{Report, Settings, encode_args};
/// let args = encode_args(&Settings::example(), &Report::default()).unwrap();
/// assert_eq!(args.len(), 24);
/// assert_eq!(args[0], "1");
/// assert_eq!(args[1], "0000000000000000");
/// ```
pub fn encode_args(settings: &Settings, report: &Report) -> Result<Vec<String>, ProtocolError> {
    settings.check()?;
    report.check()?;
    let mut args = vec![PROTOCOL_VERSION.to_string(), report.process.to_string()];
    let report_numbers = [
        report.now_ms,
        report.known_born_ms,
        report.calls,
        report.first_try_successes,
        report.held,
        report.tokens_wanted,
        report.tokens_granted,
        report.tokens_returned,
        report.sends,
        report.throttles,
        report.send_demand,
        report.known_fleet_rate,
        report.span_ms,
    ];
    args.extend(report_numbers.iter().map(u64::to_string));
    args.extend(settings.numbers().iter().map(u64::to_string));
    args.push(ProcessId(settings.config_hash).to_string());
    Ok(args)
}

/// The store's answer to a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// The process's lease until its next sync.
    Lease(Lease),
    /// The store keeps other settings for this scope (another process attached it first with
    /// them): nothing of the report was applied. The process keeps its local limits.
    Conflict(Settings),
}

/// A process's lease: its share of the fleet's retry tokens and of the fleet's send rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// Tokens to add to the quota (negative: to remove, and report as returned). Decoded only
    /// when `0 <= held + grant <= cap`, `held` being the report's.
    pub grant: i64,
    /// The fleet's cap, in tokens (`..=Settings::most`).
    pub cap: u64,
    /// Processes the store counts as live, this one included (`1..=MAX_COUNT`).
    pub live: u64,
    /// When the store's state for the scope was born, Unix milliseconds: the process reports
    /// it back as [`Report::known_born_ms`].
    pub born_ms: u64,
    /// The store's time: the latest any process reported (`report.now_ms..=MAX_TIME_MS`; a
    /// process takes a lease only within [`MOST_STORE_CLOCK_LEAD_MS`] of its own clock when
    /// the reply came, [`Reply::check_clock`]).
    pub now_ms: u64,
    /// Whether the fleet limiter is engaged (a throttle was seen).
    pub engaged: bool,
    /// The fleet's send rate, in thousandths of a request per second: 0 when not engaged,
    /// `MIN_FLEET_RATE..=MAX_RATE` when engaged.
    pub fleet_rate: u64,
    /// The process's share of the fleet's send rate, in parts per million (`..=PPM`): its share
    /// of the fleet's send demand; 0 when not engaged.
    pub share_ppm: u64,
    /// The process's send rate, `fleet_rate × share_ppm / PPM` rounded down.
    pub send_rate: u64,
    /// The fleet's retry tokens after this report, at most the cap (`..=cap`): the pool and
    /// what the store counts its processes to hold. Successes pay tokens back, failed retries
    /// spend them: far below the cap, failures across the fleet have spent its budget (see
    /// [`Lease::fleet_failing`]). 0 while the fleet's calls say its upstream is failing
    /// (fewer than half of them first-try successes,
    /// [`FAILING_SUCCESS_BELOW_PPM`](super::store_model::FAILING_SUCCESS_BELOW_PPM)): the
    /// tokens say so only once the processes have spent what they keep for their own traffic
    /// beyond what the store counts.
    pub fleet_tokens: u64,
    /// Garbage the store dropped in this step, before it applied the report: a stored value no
    /// process could have written (out of the bounds the protocol checks on a report's
    /// arguments, or not in the script's form). The state is re-learned from the processes'
    /// reports; the process warns and counts it ([`FleetStats::garbage_dropped`]).
    ///
    /// [`FleetStats::garbage_dropped`]: super::FleetStats::garbage_dropped
    pub dropped: Dropped,
}

/// What garbage the store dropped in one step ([`Lease::dropped`]); the reply's last item: 0,
/// 1 or 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Dropped {
    /// Nothing: the stored state was as the script writes it.
    #[default]
    Nothing,
    /// A process's record (this process's or a silent one's being expired): the whole state
    /// was dropped with it, as it cannot account for the record.
    ProcessRecord,
    /// The scope's state itself: a key of another type than the script writes, a state hash
    /// not in its form (only the script meets these: the store's model holds no such state),
    /// or a value out of the bounds the script writes
    /// ([`FleetState::in_bounds`](super::store_state::FleetState::in_bounds)).
    State,
}

impl Dropped {
    /// What the warning and the documentation call it.
    ///
    /// ```
    /// use retry_core::fleet::protocol::Dropped;
    /// assert_eq!(Dropped::ProcessRecord.as_str(), "a process record");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Nothing => "nothing",
            Self::ProcessRecord => "a process record",
            Self::State => "the scope's state",
        }
    }

    fn code(self) -> i64 {
        match self {
            Self::Nothing => 0,
            Self::ProcessRecord => 1,
            Self::State => 2,
        }
    }
}

/// The fleet counts as failing when its tokens are below this share of its cap, in parts per
/// million: half. Each success pays its retries back (and a first-try success a reward), so a
/// fleet whose calls mostly succeed holds about its cap; half of it spent means failed retries
/// across the fleet outpaced its successes by half a window's budget (500 tokens of a young
/// fleet: 36 failed calls' retries at the AWS SDKs' cost of 14 more than were paid back).
pub const FAILING_BELOW_PPM: u64 = 500_000;

impl Lease {
    /// Whether the fleet's reports say its upstream is failing: its tokens below
    /// [`FAILING_BELOW_PPM`] of its cap (the store replies none while fewer than half the
    /// fleet's calls are first-try successes, [`Lease::fleet_tokens`]). While it is not, a
    /// process keeps what local mode would let it spend
    /// ([`LeaseHolder`](super::lease::LeaseHolder)).
    ///
    /// ```
    /// use retry_core::fleet::protocol::Lease;
    /// let lease = Lease { grant: 0, cap: 1_000, live: 2, born_ms: 0, now_ms: 0,
    ///                     engaged: false, fleet_rate: 0, share_ppm: 0, send_rate: 0,
    ///                     fleet_tokens: 499, dropped: Default::default() };
    /// assert!(lease.fleet_failing());
    /// assert!(!Lease { fleet_tokens: 500, ..lease }.fleet_failing());
    /// ```
    pub fn fleet_failing(&self) -> bool {
        u128::from(self.fleet_tokens) * u128::from(PPM)
            < u128::from(self.cap) * u128::from(FAILING_BELOW_PPM)
    }
}

/// What the script returns for a lease, the protocol version first: `[1, 0, grant, cap, live,
/// born_ms, now_ms, engaged, fleet_rate, share_ppm, send_rate, fleet_tokens, dropped]`; for a conflict: `[1, 1,
/// stored settings]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyItem {
    /// An integer reply.
    Int(i64),
    /// A string reply.
    Text(String),
}

/// The reply code of a lease.
const CODE_LEASE: i64 = 0;
/// The reply code of a conflict.
const CODE_CONFLICT: i64 = 1;
/// The number of items of a lease reply.
const LEASE_ITEMS: usize = 13;

impl Reply {
    /// The script's return array for this reply (what [`decode`](Self::decode) reads): what a
    /// simulated store hands its processes, so that they decode it as they would Redis's.
    ///
    /// ```
    /// use retry_core::fleet::protocol::{Reply, ReplyItem, Settings};
    /// let conflict = Reply::Conflict(Settings::example());
    /// assert_eq!(conflict.encode()[1], ReplyItem::Int(1));
    /// ```
    pub fn encode(&self) -> Vec<ReplyItem> {
        let int = |value: u64| ReplyItem::Int(i64::try_from(value).unwrap_or(i64::MAX));
        let version = ReplyItem::Int(i64::from(PROTOCOL_VERSION));
        match self {
            Self::Lease(lease) => vec![
                version,
                ReplyItem::Int(CODE_LEASE),
                ReplyItem::Int(lease.grant),
                int(lease.cap),
                int(lease.live),
                int(lease.born_ms),
                int(lease.now_ms),
                ReplyItem::Int(i64::from(lease.engaged)),
                int(lease.fleet_rate),
                int(lease.share_ppm),
                int(lease.send_rate),
                int(lease.fleet_tokens),
                ReplyItem::Int(lease.dropped.code()),
            ],
            Self::Conflict(settings) => vec![
                version,
                ReplyItem::Int(CODE_CONFLICT),
                ReplyItem::Text(settings.encode()),
            ],
        }
    }

    /// Decodes the script's return array for `report`, sent under `settings`. Every item is
    /// checked: its type, its bounds, and its agreement with the report (a grant cannot make
    /// the process hold more than the fleet's cap, nor less than nothing; a share is within
    /// 0..=1). A reply that fails a check is an error: the process keeps the lease it had.
    ///
    /// ```
    /// use retry_core::fleet::protocol::{Reply, ReplyItem::Int, Report, Settings};
    /// let report = Report { now_ms: 1_000, held: 10, ..Report::default() };
    /// let items = [Int(1), Int(0), Int(90), Int(500), Int(2), Int(1_000), Int(1_000),
    ///              Int(0), Int(0), Int(0), Int(0), Int(500), Int(0)];
    /// let Reply::Lease(lease) = Reply::decode(&items, &Settings::example(), &report).unwrap()
    /// else { unreachable!() };
    /// assert_eq!(lease.grant, 90);
    /// // A grant that would make the process hold more than the cap is refused.
    /// let mut hostile = items.clone();
    /// hostile[2] = Int(491);
    /// assert!(Reply::decode(&hostile, &Settings::example(), &report).is_err());
    /// ```
    pub fn decode(
        items: &[ReplyItem],
        settings: &Settings,
        report: &Report,
    ) -> Result<Self, ProtocolError> {
        let version = int_item(items, 0, "version")?;
        if version != i64::from(PROTOCOL_VERSION) {
            return Err(ProtocolError::new(
                "version",
                version,
                &PROTOCOL_VERSION.to_string(),
            ));
        }
        match int_item(items, 1, "code")? {
            CODE_LEASE => decode_lease(items, settings, report).map(Self::Lease),
            CODE_CONFLICT => decode_conflict(items).map(Self::Conflict),
            code => Err(ProtocolError::new(
                "code",
                code,
                "0 (lease) or 1 (conflict)",
            )),
        }
    }

    /// Whether the store's clock in a lease leads the process's clock by at most
    /// [`MOST_STORE_CLOCK_LEAD_MS`]: the process's clock when the reply came, the clock of the
    /// `report` it answers plus `waited`, the time the reply took. The error names both clocks
    /// and what to check. The sync task refuses a lease that leads by more, as a reply out of
    /// bounds (a conflict has no clock).
    ///
    /// ```
    /// use retry_core::fleet::protocol::{Lease, Reply, Report, MOST_STORE_CLOCK_LEAD_MS};
    /// use std::time::Duration;
    /// let report = Report { now_ms: 1_000, ..Report::default() };
    /// let lease = Lease { grant: 0, cap: 1_000, live: 2, born_ms: 0, now_ms: 1_000,
    ///                     engaged: false, fleet_rate: 0, share_ppm: 0, send_rate: 0,
    ///                     fleet_tokens: 500, dropped: Default::default() };
    /// let waited = Duration::ZERO;
    /// assert!(Reply::Lease(lease).check_clock(&report, waited).is_ok());
    /// let ahead = Reply::Lease(Lease { now_ms: 1_001 + MOST_STORE_CLOCK_LEAD_MS, ..lease });
    /// assert_eq!(ahead.check_clock(&report, waited).unwrap_err().field(), "now_ms");
    /// assert!(ahead.check_clock(&report, Duration::from_millis(1)).is_ok());
    /// ```
    pub fn check_clock(&self, report: &Report, waited: Duration) -> Result<(), ProtocolError> {
        let Reply::Lease(lease) = self else {
            return Ok(());
        };
        let waited_ms = u64::try_from(waited.as_millis()).unwrap_or(u64::MAX);
        let clock = report.now_ms.saturating_add(waited_ms);
        let most = clock.saturating_add(MOST_STORE_CLOCK_LEAD_MS);
        if lease.now_ms <= most {
            return Ok(());
        }
        Err(ProtocolError::new(
            "now_ms",
            lease.now_ms,
            &format!(
                "{}..={most}: the store's clock, the latest any process of the fleet reported, \
                 at most {} s ahead of this process's (another host's clock runs ahead of this \
                 one's, or this one's behind; check the hosts' clocks)",
                report.now_ms,
                MOST_STORE_CLOCK_LEAD_MS / 1_000
            ),
        ))
    }
}

fn decode_lease(
    items: &[ReplyItem],
    settings: &Settings,
    report: &Report,
) -> Result<Lease, ProtocolError> {
    check_len(items, LEASE_ITEMS)?;
    let cap = bounded_item(items, 3, "cap", 0, settings.most)?;
    let grant = int_item(items, 2, "grant")?;
    let held_after = i64::try_from(report.held)
        .ok()
        .and_then(|held| held.checked_add(grant))
        .and_then(|after| u64::try_from(after).ok())
        .filter(|after| *after <= cap);
    if held_after.is_none() {
        let held = report.held;
        return Err(ProtocolError::new(
            "grant",
            grant,
            &format!("such that 0 <= held + grant <= cap (held {held}, cap {cap})"),
        ));
    }
    let now_ms = bounded_item(items, 6, "now_ms", report.now_ms, MAX_TIME_MS)?;
    let engaged = bounded_item(items, 7, "engaged", 0, 1)? == 1;
    let (least_rate, most_rate) = if engaged {
        (MIN_FLEET_RATE, MAX_RATE)
    } else {
        (0, 0)
    };
    let fleet_rate = bounded_item(items, 8, "fleet_rate", least_rate, most_rate)?;
    let share_ppm = bounded_item(items, 9, "share_ppm", 0, if engaged { PPM } else { 0 })?;
    let expected_rate = fleet_rate * share_ppm / PPM;
    let send_rate = bounded_item(items, 10, "send_rate", expected_rate, expected_rate)?;
    let fleet_tokens = bounded_item(items, 11, "fleet_tokens", 0, cap)?;
    let dropped = match bounded_item(items, 12, "dropped", 0, 2)? {
        0 => Dropped::Nothing,
        1 => Dropped::ProcessRecord,
        _ => Dropped::State,
    };
    Ok(Lease {
        grant,
        cap,
        live: bounded_item(items, 4, "live", 1, MAX_COUNT)?,
        born_ms: bounded_item(items, 5, "born_ms", 0, now_ms)?,
        now_ms,
        engaged,
        fleet_rate,
        share_ppm,
        send_rate,
        fleet_tokens,
        dropped,
    })
}

fn decode_conflict(items: &[ReplyItem]) -> Result<Settings, ProtocolError> {
    check_len(items, 3)?;
    match &items[2] {
        ReplyItem::Text(text) => Settings::parse(text),
        ReplyItem::Int(value) => Err(ProtocolError::new("settings", value, "a string")),
    }
}

fn check_len(items: &[ReplyItem], len: usize) -> Result<(), ProtocolError> {
    if items.len() == len {
        Ok(())
    } else {
        Err(ProtocolError::new(
            "reply length",
            items.len(),
            &len.to_string(),
        ))
    }
}

fn int_item(items: &[ReplyItem], index: usize, name: &'static str) -> Result<i64, ProtocolError> {
    match items.get(index) {
        Some(ReplyItem::Int(value)) => Ok(*value),
        Some(ReplyItem::Text(text)) => Err(ProtocolError::new(name, text, "an integer")),
        None => Err(ProtocolError::new(name, "nothing", "an integer")),
    }
}

fn bounded_item(
    items: &[ReplyItem],
    index: usize,
    name: &'static str,
    least: u64,
    most: u64,
) -> Result<u64, ProtocolError> {
    let value = int_item(items, index, name)?;
    u64::try_from(value)
        .ok()
        .filter(|value| (least..=most).contains(value))
        .ok_or_else(|| ProtocolError::new(name, value, &format!("{least}..={most}")))
}

fn check_range(name: &'static str, value: u64, least: u64, most: u64) -> Result<(), ProtocolError> {
    if (least..=most).contains(&value) {
        Ok(())
    } else {
        Err(ProtocolError::new(
            name,
            value,
            &format!("{least}..={most}"),
        ))
    }
}

fn parse_decimal(name: &'static str, text: &str) -> Result<u64, ProtocolError> {
    let digits = !text.is_empty() && text.len() <= 16 && text.bytes().all(|b| b.is_ascii_digit());
    digits
        .then(|| text.parse().ok())
        .flatten()
        .ok_or_else(|| ProtocolError::new(name, text, "a decimal integer of at most 16 digits"))
}

fn parse_hex16(text: &str) -> Option<u64> {
    let hex = text.len() == 16 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    hex.then(|| u64::from_str_radix(text, 16).ok()).flatten()
}

#[cfg(test)]
mod tests;
