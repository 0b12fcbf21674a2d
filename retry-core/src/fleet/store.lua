-- retry-core fleet mode, protocol 1: the store's step for one report of one scope.
-- The same step as `store_model.rs`, line for line, on the same integers (every value below
-- 2^53, every division `math.floor(a / b)` with b > 0). Deterministic: the time is the
-- processes' (ARGV), never the server's, so the script runs unchanged where `TIME` is refused
-- in scripts and under any script replication mode.
--
-- KEYS: the scope's state hash, procs hash (id -> "lease:owed:retry_demand:send_demand") and
-- seen sorted set (id -> last seen, ms). All three share one hash tag (one cluster slot).
-- ARGV: protocol version, process id, the report's numbers, the settings (protocol.rs).
-- Returns {1, 0, grant, cap, live, born, now, engaged, fleet_rate, share_ppm, send_rate,
-- fleet_tokens, dropped} for a lease (dropped: the garbage this step dropped, 0 none, 1 a
-- process record, 2 the state itself), {1, 1, stored settings} for a conflict. A process
-- that shuts down cleanly sends ARGV {protocol version, process id, 'leave'} instead (see
-- `leave` below, `store_model::leave`): {1, 2, 1 if its record was removed, else 0}.

local STATE, PROCS, SEEN = KEYS[1], KEYS[2], KEYS[3]

local MAX_COUNT = 4294967295
local MAX_TOKENS = 4294967295
local MAX_RATE = 1000000000
local MAX_TIME_MS = 1000000000000000
local MAX_WINDOW_MS = 3600000
local MAX_LEASE_TTL_MS = 86400000
local MAX_SUCCESS_REWARD = 1000000
local PPM = 1000000
local MIN_FLEET_RATE = 500
local EXPIRE_BATCH = 64
local RELEARN_INTERVALS = 2
local MOST_TICK_REPORTS = 1000000000
local MOST_TICK_SPAN_MS = 2 * MOST_TICK_REPORTS * MAX_WINDOW_MS
-- Settings::encode's longest string: 8 fields of at most 16 digits, the hash, 8 commas.
local MOST_SETTINGS_LEN = 8 * 16 + 16 + 8
local LONGEST_TICK_INTERVALS = 2
local LEAST_ADMITTED_TO_MEASURE = 10
local CUBIC_HORIZON_MS = 5000
local CONVEX_REFERENCE_INTERVAL_MS = 1000
local CUBIC_MS3_PER_PPM = 25000
local MOST_REGAIN_MS = 2924
local DEMAND_SMOOTHING = 4
local MOST_TICK_DEMAND = 8000000000
local TARGET_MARGIN_PPM = 30000
local FAILING_SUCCESS_BELOW_PPM = 500000
local FAILING_MIN_CALLS = 20
local HOLD_MS = 30000
local PROBE_PPM_PER_S = 2500
local PROBE_SPAN_MS = 60000
local ESTIMATE_AGREES_PPM = 100000
local ESTIMATE_CONFIRM_INTERVALS = 2
local FIRST_ESTIMATE_INTERVALS = 2
local FALL_THROTTLED_PPM = 50000
local EDGE_THROTTLED_PPM = 5000
local STEP_THROTTLED_PPM = 50000

local function floor_div(a, b)
  return math.floor(a / b)
end

local function fmt(x)
  return string.format('%d', x)
end

-- A decimal integer as Rust writes it (at most 16 digits, no leading zero), within
-- least..most; nil if it is not. The stored settings are compared as text: another form of the
-- same numbers would be a conflict with the process's own settings.
local function decimal_within(text, least, most)
  if type(text) ~= 'string' or #text > 16 or not string.match(text, '^%d+$')
      or (#text > 1 and string.sub(text, 1, 1) == '0') then
    return nil
  end
  local value = tonumber(text)
  if value < least or value > most then
    return nil
  end
  return value
end

-- An argument: decimal digits, at most 16, within least..most.
local function arg_int(index, least, most)
  local value = decimal_within(ARGV[index], least, most)
  if value == nil then
    return error({err = 'ERR retry-fleet: argument ' .. index ..
      ' is not a decimal integer within its bounds'})
  end
  return value
end

-- The settings in `fields` (the report's arguments 16-24, or a stored settings string's
-- fields), each within its bound (`Settings::check`); nil and the position of the first field
-- out of its bound (in the order they are checked: `most` before `young`).
local function settings_of(fields)
  if #fields ~= 9 then
    return nil, math.min(#fields + 1, 9)
  end
  local bad = nil
  local function int(at, least, most)
    local value = bad == nil and decimal_within(fields[at], least, most)
    if not value then
      bad = bad or at
      return 0
    end
    return value
  end
  local t = {window = int(1, 1, MAX_WINDOW_MS), most = int(3, 0, MAX_TOKENS)}
  t.young = int(2, 0, t.most)
  t.retry_cost = int(4, 0, MAX_TOKENS)
  t.reward = int(5, 0, MAX_SUCCESS_REWARD)
  t.interval = int(6, 1, MAX_WINDOW_MS)
  t.lease_ttl = int(7, t.interval, MAX_LEASE_TTL_MS)
  t.beta = int(8, 1, PPM - 1)
  if bad == nil and (#fields[9] ~= 16 or not string.match(fields[9], '^[0-9a-f]+$')) then
    bad = 9
  end
  if bad ~= nil then
    return nil, bad
  end
  return t
end

-- A stored settings string's fields: what lies between its commas.
local function fields_of(text)
  local fields = {}
  for field in string.gmatch(text .. ',', '([^,]*),') do
    fields[#fields + 1] = field
  end
  return fields
end

local function arg_hex16(index)
  local text = ARGV[index]
  if type(text) ~= 'string' or #text ~= 16 or not string.match(text, '^[0-9a-f]+$') then
    return error({err = 'ERR retry-fleet: argument ' .. index .. ' is not 16 hex digits'})
  end
  return text
end

-- The stored state. Anything that is not what this script writes (a corrupt or foreign value)
-- makes the state count as lost: it is dropped and re-learned.
local INT_FIELDS = {
  'born', 'now', 'relearn_until', 'pool', 'leased', 'retry_demand', 'send_demand',
  'tick_start', 'tick_calls', 'tick_sends', 'tick_throttles', 'tick_reports', 'calls_rate',
  'send_rate',
  'admitted_rate', 'engaged', 'adopting', 'w_max', 'cold_cut', 'cut_at', 'fleet_rate',
}
-- Fields an earlier script of the same protocol did not write: missing, they are 0.
local OPTIONAL_INT_FIELDS = {
  'departed_demand', 'tick_successes', 'calls_failing', 'tick_demand', 'curve_paused',
  'last_sends', 'last_throttles', 'expired_at', 'rate_before_cuts', 'recounted_at',
  'tick_span',
}

local function stored_int(text)
  if type(text) ~= 'string' or #text > 17 or not string.match(text, '^%-?%d+$') then
    return nil
  end
  return tonumber(text)
end

-- Whether every value is within what this script writes (the model's
-- `FleetState::in_bounds`), `interval` the stored settings' sync interval: the clock in its
-- range and every time set from it at or before it (the end of re-learning at most
-- RELEARN_INTERVALS intervals after it), the pool, the tick's counts and the rates in their
-- ranges, the sums not negative, the curve's pause from minus the longest regain to the time
-- since the cut. Out of them, the state is garbage: no report could have led to it.
local function in_bounds(f, interval)
  local function within(value, least, most)
    return value >= least and value <= most
  end
  if not within(f.now, 0, MAX_TIME_MS) then
    return false
  end
  for _, name in ipairs({'born', 'tick_start', 'expired_at', 'recounted_at'}) do
    if not within(f[name], 0, f.now) then
      return false
    end
  end
  for _, name in ipairs({'tick_calls', 'tick_sends', 'tick_throttles', 'tick_successes',
                         'last_sends', 'last_throttles'}) do
    if not within(f[name], 0, MAX_COUNT) then
      return false
    end
  end
  if not within(f.tick_reports, 0, MOST_TICK_REPORTS)
      or not within(f.tick_span, 0, MOST_TICK_SPAN_MS) then
    return false
  end
  -- An unknown rate is stored negative.
  for _, name in ipairs({'calls_rate', 'send_rate', 'admitted_rate'}) do
    if f[name] > MAX_RATE then
      return false
    end
  end
  return within(f.relearn_until, 0, f.now + RELEARN_INTERVALS * interval)
    and within(f.cut_at, -MAX_TIME_MS, f.now) and within(f.pool, 0, MAX_TOKENS)
    and f.leased >= 0 and f.retry_demand >= 0 and f.send_demand >= 0
    and within(f.w_max, 0, MAX_RATE) and within(f.fleet_rate, 0, MAX_RATE)
    and within(f.rate_before_cuts, 0, MAX_RATE)
    and within(f.curve_paused, -MOST_REGAIN_MS, f.now - f.cut_at)
end

-- The stored fleet; nil if there is none, nil and true if it is garbage.
local function load_fleet()
  local flat = redis.call('HGETALL', STATE)
  if #flat == 0 then
    return nil
  end
  local raw = {}
  for i = 1, #flat, 2 do
    raw[flat[i]] = flat[i + 1]
  end
  local fleet = {settings = raw.settings}
  if type(fleet.settings) ~= 'string' or #fleet.settings > MOST_SETTINGS_LEN then
    return nil, true
  end
  local stored_settings = settings_of(fields_of(fleet.settings))
  if stored_settings == nil then
    return nil, true
  end
  for _, name in ipairs(INT_FIELDS) do
    local value = stored_int(raw[name])
    if value == nil then
      return nil, true
    end
    fleet[name] = value
  end
  for _, name in ipairs(OPTIONAL_INT_FIELDS) do
    fleet[name] = 0
    if raw[name] ~= nil then
      fleet[name] = stored_int(raw[name])
      if fleet[name] == nil then
        return nil, true
      end
    end
  end
  for _, flag in ipairs({'engaged', 'adopting', 'cold_cut', 'calls_failing'}) do
    if fleet[flag] ~= 0 and fleet[flag] ~= 1 then
      return nil, true
    end
  end
  if not in_bounds(fleet, stored_settings.interval) then
    return nil, true
  end
  return fleet
end

-- A record as this script writes it, every value within the bounds the protocol puts on what
-- a process reports (a value beyond them is garbage: no report could have led to it); nil
-- otherwise.
local function parse_record(text)
  if type(text) ~= 'string' or #text > 80 then
    return nil
  end
  local lease, owed, rd, sd = string.match(text, '^(%d+):(%d+):(%d+):(%d+)$')
  if lease == nil then
    return nil
  end
  local rec = {lease = tonumber(lease), owed = tonumber(owed), retry_demand = tonumber(rd),
               send_demand = tonumber(sd)}
  if rec.lease > MAX_TOKENS or rec.owed > MAX_TOKENS or rec.retry_demand > MAX_COUNT or
      rec.send_demand > MAX_RATE then
    return nil
  end
  return rec
end

local function record_text(rec)
  return fmt(rec.lease) .. ':' .. fmt(rec.owed) .. ':' .. fmt(rec.retry_demand) .. ':' ..
    fmt(rec.send_demand)
end

local function drop_all()
  redis.call('DEL', STATE, PROCS, SEEN)
end

local function save_fleet(fleet)
  local args = {'settings', fleet.settings}
  for _, name in ipairs(INT_FIELDS) do
    args[#args + 1] = name
    args[#args + 1] = fmt(fleet[name])
  end
  for _, name in ipairs(OPTIONAL_INT_FIELDS) do
    args[#args + 1] = name
    args[#args + 1] = fmt(fleet[name])
  end
  redis.call('HSET', STATE, unpack(args))
end

-- Whether each key is missing or of the type this script writes: a key of another type is a
-- lost state, dropped and re-learned (the model's state lost).
local function keys_of_their_types()
  for key, kind in pairs({[STATE] = 'hash', [PROCS] = 'hash', [SEEN] = 'zset'}) do
    local found = redis.call('TYPE', key)['ok']
    if found ~= 'none' and found ~= kind then
      return false
    end
  end
  return true
end

-- A process that shuts down cleanly leaves (ARGV: the protocol version, its id, 'leave'): its
-- record goes, and its lease and demands leave the sums at once; its send demand is not kept
-- as departed demand (it sends no more). A state that is missing or garbage, or a record that
-- is missing or garbage, is left as it is (the next report's step deals with it). Returns
-- {1, 2, 1} if a record was removed, {1, 2, 0} otherwise.
local function leave(pid)
  if not keys_of_their_types() then
    return {1, 2, 0}
  end
  local fleet = load_fleet()
  local rec = parse_record(redis.call('HGET', PROCS, pid))
  if fleet == nil or rec == nil then
    return {1, 2, 0}
  end
  redis.call('HDEL', PROCS, pid)
  redis.call('ZREM', SEEN, pid)
  fleet.leased = fleet.leased - rec.lease
  fleet.retry_demand = fleet.retry_demand - rec.retry_demand
  fleet.send_demand = fleet.send_demand - rec.send_demand
  save_fleet(fleet)
  return {1, 2, 1}
end

if #ARGV == 3 and ARGV[1] == '1' and ARGV[3] == 'leave' then
  return leave(arg_hex16(2))
end

if #ARGV ~= 24 then
  return redis.error_reply('ERR retry-fleet: 24 arguments expected, got ' .. #ARGV)
end
if ARGV[1] ~= '1' then
  return redis.error_reply('ERR retry-fleet: protocol 1 expected, got ' .. tostring(ARGV[1]))
end

local id = arg_hex16(2)
local r = {
  now = arg_int(3, 0, MAX_TIME_MS),
  known_born = arg_int(4, 0, MAX_TIME_MS),
  calls = arg_int(5, 0, MAX_COUNT),
  successes = arg_int(6, 0, MAX_COUNT),
  held = arg_int(7, 0, MAX_TOKENS),
  wanted = arg_int(8, 0, MAX_COUNT),
  granted = arg_int(9, 0, MAX_COUNT),
  returned = arg_int(10, 0, MAX_COUNT),
  sends = arg_int(11, 0, MAX_COUNT),
  throttles = arg_int(12, 0, MAX_COUNT),
  send_demand = arg_int(13, 0, MAX_RATE),
  known_rate = arg_int(14, 0, MAX_RATE),
  span = arg_int(15, 0, MAX_TIME_MS),
}
local s, bad_setting = settings_of({unpack(ARGV, 16, 24)})
if s == nil then
  return redis.error_reply('ERR retry-fleet: argument ' .. (15 + bad_setting) ..
    ' is not a setting within its bounds')
end
local settings = table.concat(ARGV, ',', 16, 24)

-- Removes up to EXPIRE_BATCH processes last seen before `cutoff`. False if a silent process
-- has no valid record (a corrupt state).
local function expire(fleet, cutoff)
  local ids = redis.call('ZRANGEBYSCORE', SEEN, '-inf', '(' .. fmt(cutoff), 'LIMIT', 0,
    EXPIRE_BATCH)
  for _, pid in ipairs(ids) do
    local rec = parse_record(redis.call('HGET', PROCS, pid))
    if rec == nil then
      return false
    end
    redis.call('HDEL', PROCS, pid)
    redis.call('ZREM', SEEN, pid)
    fleet.leased = fleet.leased - rec.lease
    fleet.retry_demand = fleet.retry_demand - rec.retry_demand
    fleet.send_demand = fleet.send_demand - rec.send_demand
    fleet.departed_demand = math.min(fleet.departed_demand + rec.send_demand, MAX_RATE)
    fleet.expired_at = fleet.now
  end
  return true
end

-- Releases the departed send demand for the time since the last report: a share
-- min(elapsed, lease) / lease of it, rounded up (about e per lease, never slower than linearly
-- to nothing over one; it reaches 0). A stored value out of 0..MAX_RATE is clamped first.
local function release_departed(fleet, now)
  local departed = math.max(0, math.min(fleet.departed_demand, MAX_RATE))
  local elapsed = math.min(now - fleet.now, s.lease_ttl)
  local share = floor_div(elapsed * PPM, s.lease_ttl)
  fleet.departed_demand = departed - floor_div(departed * share + PPM - 1, PPM)
end

local function new_fleet(now)
  local relearn = r.known_born > 0
  local fleet = {
    settings = settings, born = now, now = now, relearn_until = 0,
    pool = math.min(s.young, s.most), leased = 0, retry_demand = 0, send_demand = 0,
    departed_demand = 0,
    tick_start = now, tick_calls = 0, tick_sends = 0, tick_throttles = 0, tick_reports = 0,
    tick_successes = 0, tick_demand = 0, tick_span = 0, last_sends = 0,
    last_throttles = 0,
    calls_rate = -1, send_rate = -1, admitted_rate = -1,
    calls_failing = 0,
    engaged = 0, adopting = 0, w_max = 0, cold_cut = 0, cut_at = 0, curve_paused = 0,
    fleet_rate = 0, expired_at = 0, rate_before_cuts = 0, recounted_at = now,
  }
  if relearn then
    fleet.born = math.min(r.known_born, now)
    fleet.relearn_until = now + RELEARN_INTERVALS * s.interval
    fleet.pool = 0
    fleet.adopting = 1
  end
  return fleet
end

-- The send demand the store counts: the reported one moved in DEMAND_SMOOTHING steps.
local function smoothed_demand(previous, reported)
  if previous ~= nil then
    return previous.send_demand + floor_div(reported - previous.send_demand, DEMAND_SMOOTHING)
  end
  return reported
end

local function count_holding(fleet, previous, now)
  local counted
  if previous ~= nil then
    local accountable = previous.lease + r.successes * s.reward + r.granted
    fleet.pool = fleet.pool + math.min(r.returned, previous.owed)
    fleet.leased = fleet.leased - previous.lease
    fleet.retry_demand = fleet.retry_demand - previous.retry_demand
    fleet.send_demand = fleet.send_demand - previous.send_demand
    counted = math.min(r.held, accountable, s.most)
  elseif fleet.relearn_until > now and r.known_born == fleet.born then
    counted = math.min(r.held, s.most)
  else
    counted = 0
  end
  fleet.leased = fleet.leased + counted
  fleet.retry_demand = fleet.retry_demand + r.wanted
  fleet.send_demand = fleet.send_demand + r.send_demand
  return counted
end

-- The report's counts, and the report among the tick's if it tells about its process's
-- traffic (a process the store knew, or one that knew this fleet); with its span, clamped to
-- a quarter of an interval to two, if it has one (none before its scope's first traffic).
local function add_to_tick(fleet, is_new)
  fleet.tick_calls = math.min(fleet.tick_calls + r.calls, MAX_COUNT)
  fleet.tick_sends = math.min(fleet.tick_sends + r.sends, MAX_COUNT)
  fleet.tick_throttles = math.min(fleet.tick_throttles + r.throttles, MAX_COUNT)
  fleet.tick_successes = math.min(fleet.tick_successes + r.successes, MAX_COUNT)
  local whole = not is_new or r.known_born == fleet.born
  if whole then
    fleet.tick_reports = math.min(fleet.tick_reports + 1, MOST_TICK_REPORTS)
  end
  if whole and r.span > 0 then
    local span = math.min(math.max(r.span, math.max(floor_div(s.interval, 4), 1)),
      2 * s.interval)
    fleet.tick_span = math.min(fleet.tick_span + span, MOST_TICK_SPAN_MS)
    local demand = floor_div(r.send_demand * span, s.interval)
    fleet.tick_demand = math.min(math.min(fleet.tick_demand, MOST_TICK_DEMAND) + demand,
      MOST_TICK_DEMAND)
  end
end

-- The attempts the server admitted in the current tick.
local function admitted_in_tick(fleet)
  return fleet.tick_sends - math.min(fleet.tick_throttles, fleet.tick_sends)
end

-- count of the tick over its reports' spans, times the live processes (nil without such a
-- report).
local function per_report_rate(fleet, count, live)
  if fleet.tick_span <= 0 then
    return nil
  end
  local per_process = floor_div(count * 1000000, fleet.tick_span)
  live = math.max(live, 1)
  if per_process > floor_div(MAX_RATE, live) then
    return MAX_RATE
  end
  return per_process * live
end

-- The share of the fleet's send demand the tick's reports of known processes carry, each
-- weighed by its span in sync intervals, ppm, at least 1 (nil while either demand is 0).
local function reported_share(fleet)
  local reported = math.min(fleet.tick_demand, MOST_TICK_DEMAND)
  if fleet.tick_reports == 0 or reported <= 0 or fleet.send_demand <= 0 then
    return nil
  end
  return math.max(floor_div(reported * PPM, fleet.send_demand), 1)
end

-- count of the tick as the fleet's rate: over a sync interval, scaled up by the reports'
-- share of the fleet's demand (nil without a share).
local function demand_weighted_rate(fleet, count)
  local share = reported_share(fleet)
  if share == nil then
    return nil
  end
  local per_interval = math.min(floor_div(count * 1000000, s.interval), MAX_RATE)
  return math.min(floor_div(per_interval * PPM, share), MAX_RATE)
end

-- A fleet not yet engaged: the tick's admitted traffic per report (nil when engaged).
local function admitted_per_report(fleet, live)
  if fleet.engaged == 1 then
    return nil
  end
  return per_report_rate(fleet, admitted_in_tick(fleet), live)
end

-- The tick's calls the server answered: at most its calls, at most its admitted attempts.
local function answered_in_tick(fleet)
  return math.min(fleet.tick_calls, admitted_in_tick(fleet))
end

-- Whether the tick's answered calls say the upstream is failing.
local function tick_says_failing(fleet)
  local answered = answered_in_tick(fleet)
  return answered >= FAILING_MIN_CALLS and
    fleet.tick_successes * PPM < answered * FAILING_SUCCESS_BELOW_PPM
end

-- The current tick's once it holds FAILING_MIN_CALLS answered calls from more than one
-- report, else the last tick's.
local function fleet_calls_failing(fleet)
  if answered_in_tick(fleet) >= FAILING_MIN_CALLS and fleet.tick_reports > 1 then
    return tick_says_failing(fleet)
  end
  return fleet.calls_failing == 1
end

-- The time an engaged fleet's send rate is averaged over (store_model::send_rate_span):
-- the window for a tick that sent less than the average.
local function send_rate_span(fleet, live, falling)
  local longest = math.max(s.window, s.interval)
  if falling then
    return longest
  end
  local earn_one = floor_div(math.max(live, 1) * 1000000, math.max(fleet.fleet_rate, 1))
  return math.min(math.max(earn_one, s.interval), longest)
end

local function integer_cube_root(n)
  local low, high = 0, 3000
  while low < high do
    local mid = floor_div(low + high + 1, 2)
    if mid * mid * mid <= n then
      low = mid
    else
      high = mid - 1
    end
  end
  return low
end

-- count over the current tick so far, per second (thousandths), the tick at least a quarter
-- of an interval long.
local function tick_rate_so_far(fleet, count, now)
  local elapsed = math.max(now - fleet.tick_start, floor_div(s.interval, 4), 1)
  return math.min(floor_div(count * 1000000, elapsed), MAX_RATE)
end

-- The time from a cut to the curve's return to the target, ms.
local function regain_ms()
  return integer_cube_root(CUBIC_MS3_PER_PPM * (PPM - s.beta))
end

-- The fleet's target under a measured limit, and the limit whose target is a rate.
local function target_of(limit)
  return floor_div(limit * (PPM - TARGET_MARGIN_PPM), PPM)
end

local function limit_with_target(rate)
  return math.min(floor_div(rate * PPM, PPM - TARGET_MARGIN_PPM), MAX_RATE)
end

-- How long the curve holds its target, then probes linearly, ms: none after an estimate.
local function curve_phases(fleet)
  if fleet.cold_cut == 1 then
    return 0, 0
  end
  return HOLD_MS, PROBE_SPAN_MS
end

-- The time the convex growth counts as CONVEX_REFERENCE_INTERVAL_MS, ms: the sync interval if
-- longer, once the fleet holds a limit it measured (store_model::convex_unit_ms).
local function convex_unit_ms(fleet)
  if fleet.cold_cut == 1 then
    return CONVEX_REFERENCE_INTERVAL_MS
  end
  return math.max(s.interval, CONVEX_REFERENCE_INTERVAL_MS)
end

-- How long the convex growth lasts before the curve is rebased, ms.
local function horizon_ms(fleet)
  return floor_div(CUBIC_HORIZON_MS * convex_unit_ms(fleet), CONVEX_REFERENCE_INTERVAL_MS)
end

-- The curve's growth over the target (ppm), d ms past its return to it: CUBIC's concave part
-- before, then the hold, the linear probe, and CUBIC's convex growth up to the horizon.
local function curve_growth(fleet, d)
  if d < 0 then
    return floor_div(d * d * d, CUBIC_MS3_PER_PPM)
  end
  local hold, span = curve_phases(fleet)
  local probing = math.max(0, math.min(d - hold, span))
  local past_probe = math.max(0, math.min(d - hold - span, horizon_ms(fleet)))
  local convex = floor_div(past_probe * CONVEX_REFERENCE_INTERVAL_MS, convex_unit_ms(fleet))
  return floor_div(PROBE_PPM_PER_S * probing, 1000)
    + floor_div(convex * convex * convex, CUBIC_MS3_PER_PPM)
end

-- How far the curve is past its return to the target, ms, less the time it was held unused.
local function curve_time(fleet, now)
  return now - fleet.cut_at - regain_ms() - fleet.curve_paused
end

-- A curve that ran to its horizon without a throttle grows again from where it got.
local function rebase_past_horizon(fleet, now)
  local hold, span = curve_phases(fleet)
  local horizon = horizon_ms(fleet)
  if curve_time(fleet, now) <= hold + span + horizon then
    return
  end
  local top = PPM + curve_growth(fleet, hold + span + horizon)
  local probed = PPM + curve_growth(fleet, hold + span)
  fleet.w_max = math.min(floor_div(fleet.w_max * top, probed), MAX_RATE)
  fleet.cut_at = now - regain_ms() - hold - span
  fleet.curve_paused = 0
end

-- The curve's rate, uncapped, time ms past its return to the target (as curve_time counts).
local function curve_rate_at(fleet, time)
  local growth = curve_growth(fleet, math.max(-regain_ms(), time))
  local target = target_of(fleet.w_max)
  return target + floor_div(target * growth, PPM)
end

-- Holds the curve over a tick that end_tick measures, ending now, elapsed long, in which the
-- fleet sent under half the rate its processes were given (the curve's a sync interval
-- before the tick began) and wants less than it (store_model::pause_unused_curve).
local function pause_unused_curve(fleet, elapsed, now)
  if fleet.engaged == 0 then
    return
  end
  local past_target = curve_time(fleet, now)
  local sent = math.min(floor_div(fleet.tick_sends * 1000000, elapsed), MAX_RATE)
  local given = curve_rate_at(fleet, past_target - elapsed - s.interval)
  if past_target > 0 and 2 * sent < given and fleet.send_demand < given then
    fleet.curve_paused = fleet.curve_paused + math.min(elapsed, past_target)
  end
end

-- The tick that ends measures again the limit of a held cut (or a cold start's first
-- estimate, FIRST_ESTIMATE_INTERVALS) made in it: throttled too and admitting more than the cut
-- measured, the limit is what it admitted.
local function measure_cut_again(fleet)
  local first_estimate = fleet.cut_at - fleet.born <= FIRST_ESTIMATE_INTERVALS * s.interval
  local measured_again = fleet.cold_cut == 0 or first_estimate
  local cut_in_tick = fleet.engaged == 1 and measured_again and fleet.cut_at >= fleet.tick_start
  if cut_in_tick and fleet.tick_throttles > 0 and fleet.admitted_rate > fleet.w_max then
    fleet.w_max = fleet.admitted_rate
  end
end

-- Ends a tick of at least an interval: the fleet's rates over it (the send and admitted
-- rates only from a tick of at most LONGEST_TICK_INTERVALS: a longer one missed reports).
local function end_tick(fleet, live, now)
  local elapsed = now - fleet.tick_start
  if elapsed < s.interval then
    return
  end
  local function per_second(count)
    return math.min(floor_div(count * 1000000, elapsed), MAX_RATE)
  end
  local calls = per_second(fleet.tick_calls)
  if fleet.calls_rate < 0 then
    fleet.calls_rate = calls
  else
    local weight = floor_div(math.min(elapsed, s.window) * PPM, s.window)
    fleet.calls_rate = fleet.calls_rate + floor_div((calls - fleet.calls_rate) * weight, PPM)
  end
  local whole = elapsed <= LONGEST_TICK_INTERVALS * s.interval
  fleet.last_sends, fleet.last_throttles = 0, 0
  if whole then
    fleet.last_sends, fleet.last_throttles = fleet.tick_sends, fleet.tick_throttles
    pause_unused_curve(fleet, elapsed, now)
    local sent = per_second(fleet.tick_sends)
    if fleet.send_rate >= 0 and fleet.engaged == 1 then
      local span = send_rate_span(fleet, live, sent < fleet.send_rate)
      local weight = floor_div(math.min(elapsed, span) * PPM, span)
      fleet.send_rate = fleet.send_rate + floor_div((sent - fleet.send_rate) * weight, PPM)
    else
      fleet.send_rate = sent
    end
    local admitted = admitted_in_tick(fleet)
    fleet.admitted_rate = demand_weighted_rate(fleet, admitted) or
      per_report_rate(fleet, admitted, live) or per_second(admitted)
    measure_cut_again(fleet)
  end
  fleet.calls_failing = 0
  if tick_says_failing(fleet) then
    fleet.calls_failing = 1
  end
  fleet.tick_start = now
  fleet.tick_calls = 0
  fleet.tick_sends = 0
  fleet.tick_throttles = 0
  fleet.tick_successes = 0
  fleet.tick_reports = 0
  fleet.tick_demand = 0
  fleet.tick_span = 0
end

local function fleet_curve(fleet, now)
  local rate = curve_rate_at(fleet, curve_time(fleet, now))
  if fleet.send_rate >= 0 then
    local sending = tick_rate_so_far(fleet, fleet.tick_sends, now)
    rate = math.min(rate, 2 * math.max(fleet.send_rate, sending))
  end
  return math.max(MIN_FLEET_RATE, math.min(rate, MAX_RATE))
end

-- The limit a throttle measures: the last tick's admitted rate; a fleet not yet engaged takes
-- the current tick's so far (or its traffic per report) if more; an engaged one whose last
-- tick admitted fewer than LEAST_ADMITTED_TO_MEASURE attempts, the current tick's admissions
-- over a sync interval if more (each report counts about an interval of its traffic). A fleet
-- climbing from an estimate (cold_cut) takes the current tick's rate so far by its reports'
-- demand if more: a climb's last tick says less than the traffic that met the limit.
local function measured_limit(fleet, per_report, now)
  local admitted = admitted_in_tick(fleet)
  if fleet.admitted_rate >= 0 and fleet.engaged == 1 and fleet.cold_cut == 1 then
    return math.max(fleet.admitted_rate, demand_weighted_rate(fleet, admitted) or 0)
  end
  if fleet.admitted_rate >= 0 and fleet.engaged == 1 then
    if fleet.admitted_rate * s.interval >= LEAST_ADMITTED_TO_MEASURE * 1000000 then
      return fleet.admitted_rate
    end
    local per_interval = floor_div(admitted * 1000000, math.max(s.interval, 1))
    return math.max(fleet.admitted_rate, math.min(per_interval, MAX_RATE))
  end
  local current = math.max(tick_rate_so_far(fleet, admitted, now), per_report or 0)
  if fleet.admitted_rate >= 0 then
    return math.max(fleet.admitted_rate, current)
  end
  if fleet.engaged == 1 then
    -- Adopted, no whole tick measured yet: the fleet's own rate, or the current tick's
    -- admissions over a sync interval if more.
    local per_interval = floor_div(admitted * 1000000, math.max(s.interval, 1))
    return math.max(fleet.fleet_rate, math.min(per_interval, MAX_RATE))
  end
  return current
end

-- Whether a cut after an estimate confirms it: under it, or at most ESTIMATE_AGREES_PPM over
-- it and ESTIMATE_CONFIRM_INTERVALS after it or later.
local function confirms(fleet, measured, now)
  local soon = now - fleet.cut_at < ESTIMATE_CONFIRM_INTERVALS * s.interval
  return measured < fleet.w_max or
    (not soon and measured <= fleet.w_max + floor_div(fleet.w_max * ESTIMATE_AGREES_PPM, PPM))
end

-- Whether the fleet holds a limit it measured: engaged, its last cut not an estimate, its curve
-- at most that limit (store_model::holds_a_measured_limit).
local function holds_a_measured_limit(fleet, now)
  return fleet.engaged == 1 and fleet.cold_cut == 0 and
    curve_rate_at(fleet, curve_time(fleet, now)) <= fleet.w_max
end

-- The attempts and throttles of the last whole tick and the current one so far
-- (store_model::last_two_ticks).
local function last_two_ticks(fleet)
  return fleet.last_sends + fleet.tick_sends, fleet.last_throttles + fleet.tick_throttles
end

-- Whether a cut that measured a limit is at least beta times the held limit
-- (store_model::within_beta).
local function within_beta(fleet, measured)
  return measured * PPM >= fleet.w_max * s.beta
end

-- Whether a cut measured the fleet's fall rather than the server (the limit is then beta times
-- the one the fleet held): a fleet held at a measured limit (not an estimate, its curve at most
-- that limit), under beta times it, with at most FALL_THROTTLED_PPM of the tick's attempts
-- throttled (the current tick's so far, or the report's if it has none).
local function falls(fleet, measured, now)
  local sends, throttles = fleet.tick_sends, fleet.tick_throttles
  if sends == 0 then
    sends, throttles = r.sends, r.throttles
  end
  return holds_a_measured_limit(fleet, now) and not within_beta(fleet, measured) and
    throttles * PPM <= sends * FALL_THROTTLED_PPM
end

-- Whether a fleet not yet engaged has seen enough to measure a limit on a throttle: a whole
-- tick, LEAST_ADMITTED_TO_MEASURE attempts admitted in the current one, or a sync interval
-- since it was born (store_model::cold_fleet_measures).
local function cold_fleet_measures(fleet, now)
  return fleet.admitted_rate >= 0 or admitted_in_tick(fleet) >= LEAST_ADMITTED_TO_MEASURE or
    now - fleet.born >= s.interval
end

-- Whether a throttle on a fleet held at a measured limit is the server's bucket's edge, not a
-- lower limit: not an estimate, the curve at most the limit, the cut under it, and either the
-- only throttle of the last whole tick and the current one in fewer than 200 attempts, or the
-- cut at least beta times the limit (further under, the fall's) with at most
-- EDGE_THROTTLED_PPM of those ticks' attempts throttled (store_model::at_buckets_edge). No cut.
local function at_buckets_edge(fleet, measured, now)
  local sends, throttles = last_two_ticks(fleet)
  local lone = throttles <= 1 and sends * EDGE_THROTTLED_PPM < PPM
  return holds_a_measured_limit(fleet, now) and measured < fleet.w_max and
    (lone or (within_beta(fleet, measured) and throttles * PPM <= sends * EDGE_THROTTLED_PPM))
end

-- The share of the last whole tick's and the current one's attempts throttled, in parts per
-- million, if a cut that measured a limit steps a held limit down by it rather than to what was
-- measured: held at a measured limit, the cut between beta times it and it, at most
-- STEP_THROTTLED_PPM of those ticks throttled (store_model::steps_down); nil otherwise.
local function steps_down(fleet, measured, now)
  local sends, throttles = last_two_ticks(fleet)
  if holds_a_measured_limit(fleet, now) and within_beta(fleet, measured) and
      measured < fleet.w_max and sends > 0 and throttles * PPM <= sends * STEP_THROTTLED_PPM then
    return floor_div(throttles * PPM, sends)
  end
  return nil
end

-- Whether the last cut came when a process the store expired may have been silent already: at
-- most a lease before the store last expired one, or after.
local function cut_while_unheard(fleet)
  return fleet.expired_at > 0 and fleet.cut_at >= fleet.expired_at - s.lease_ttl
end

-- Keeps the fleet's rate before a cut: the rate now, or the one kept if the last cut came in the
-- window of the latest expiry (store_model::remember_rate_before_cuts), nothing for a fleet
-- not yet engaged.
local function remember_rate_before_cuts(fleet)
  if fleet.engaged == 0 then
    fleet.rate_before_cuts = 0
  elseif not (cut_while_unheard(fleet) and fleet.rate_before_cuts > 0) then
    fleet.rate_before_cuts = fleet.fleet_rate
  end
end

-- A process the store expired reports again (it knew this fleet): the cuts made while it was
-- unheard measured the others only. The limit returns to the one whose target is the rate
-- before the first of them, held, if higher. Not while the store re-learns.
local function undo_cuts_made_without(fleet, is_new, now)
  local returning = is_new and r.known_born == fleet.born and fleet.relearn_until <= now
  local limit_before = limit_with_target(fleet.rate_before_cuts)
  if not (returning and fleet.engaged == 1 and cut_while_unheard(fleet)
      and limit_before > fleet.w_max) then
    return
  end
  fleet.w_max = limit_before
  fleet.cold_cut = 0
  fleet.expired_at = 0
  fleet.rate_before_cuts = 0
end

-- A cut on a throttle: the limit measured; for a held limit, one step down if it measured the
-- fleet's fall, or the throttled share off it if few were throttled (store_model::cut).
local function cut(fleet, measured, now)
  remember_rate_before_cuts(fleet)
  local curve_paused = 0
  local throttled = steps_down(fleet, measured, now)
  if falls(fleet, measured, now) then
    fleet.w_max = floor_div(fleet.w_max * s.beta, PPM)
  elseif throttled then
    local step = math.min(throttled, PPM - s.beta)
    fleet.w_max = math.max(floor_div(fleet.w_max * (PPM - step), PPM), MIN_FLEET_RATE)
    curve_paused = -regain_ms()
  else
    if fleet.engaged == 0 or (fleet.cold_cut == 1 and not confirms(fleet, measured, now)) then
      fleet.cold_cut = 1
    else
      fleet.cold_cut = 0
    end
    fleet.w_max = measured
  end
  fleet.cut_at = now
  fleet.curve_paused = curve_paused
  fleet.engaged = 1
  fleet.adopting = 0
end

-- Adoption (of the rate a process knew, from its first report to a re-learning store, given
-- to the fleet at once), the cut on a throttle, the fleet's rate (store_model::limiter_step).
local function limiter_step(fleet, is_new, per_report, now)
  if fleet.adopting == 1 and now >= fleet.relearn_until then
    fleet.adopting = 0
  end
  if fleet.adopting == 1 and is_new and r.known_rate > 0 and
      (fleet.engaged == 0 or r.known_rate < fleet.fleet_rate) then
    fleet.engaged = 1
    fleet.w_max = limit_with_target(r.known_rate)
    fleet.cold_cut = 0
    fleet.cut_at = now - regain_ms()
    fleet.curve_paused = 0
    fleet.fleet_rate = fleet_curve(fleet, now)
  end
  local may_cut
  if fleet.engaged == 1 then
    may_cut = now - fleet.cut_at >= s.interval
  else
    may_cut = cold_fleet_measures(fleet, now)
  end
  if r.throttles > 0 and may_cut then
    local measured = math.max(measured_limit(fleet, per_report, now), MIN_FLEET_RATE)
    if not at_buckets_edge(fleet, measured, now) then
      cut(fleet, measured, now)
    end
  end
  if fleet.engaged == 1 then
    rebase_past_horizon(fleet, now)
    fleet.fleet_rate = fleet_curve(fleet, now)
  else
    fleet.fleet_rate = 0
  end
end

-- The fleet's cap (store_model::cap): its calls over the window, at least the young quota
-- while young; until they are known, the young quota for a new fleet, what its processes hold
-- for one the store re-learns.
local function cap_at(fleet, now)
  local base
  if fleet.calls_rate >= 0 then
    base = floor_div(fleet.calls_rate * s.window, 1000000)
    if now < fleet.born + s.window then
      base = math.max(base, s.young)
    end
  elseif fleet.relearn_until > 0 then
    base = fleet.pool + fleet.leased
  else
    base = s.young
  end
  return math.min(base, s.most)
end

-- Whether a process was last seen after `now`, the store's clock: this script marks the
-- reporting process seen at its clock, another client marked this one.
local function seen_after(now)
  return #redis.call('ZRANGEBYSCORE', SEEN, '(' .. fmt(now), '+inf', 'LIMIT', 0, 1) > 0
end

-- Once a lease, the sums of the leases and demands counted again from the records
-- (store_model::sums_recounted): whether they agree (or no recount was due); a recount that
-- agrees is dated now. Sums that disagree, a record out of bounds, or another count of
-- records than of `seen` entries (a record without its entry never expires; the model's codec
-- refuses such a state) are garbage.
local function sums_recounted(fleet, now)
  if now - fleet.recounted_at < s.lease_ttl then
    return true
  end
  local flat = redis.call('HGETALL', PROCS)
  if #flat / 2 ~= redis.call('ZCARD', SEEN) then
    return false
  end
  local leased, retry_demand, send_demand = 0, 0, 0
  for i = 2, #flat, 2 do
    local rec = parse_record(flat[i])
    if rec == nil then
      return false
    end
    leased = leased + rec.lease
    retry_demand = retry_demand + rec.retry_demand
    send_demand = send_demand + rec.send_demand
  end
  local agree = leased == fleet.leased and retry_demand == fleet.retry_demand and
    send_demand == fleet.send_demand
  if agree then
    fleet.recounted_at = now
  end
  return agree
end

-- 1. The clock; 2. expiry and, once a lease, the sums recounted; 3. settings; 4. a missing
-- state. `dropped`: the garbage met.
local dropped = 0
if not keys_of_their_types() then
  dropped = 2
  drop_all()
end
local fleet, garbage = load_fleet()
if fleet == nil then
  if garbage then
    dropped = 2
  end
  drop_all()
end
local now = r.now
if fleet ~= nil then
  now = math.max(fleet.now, r.now)
  release_departed(fleet, now)
  fleet.now = now
  if not expire(fleet, now - s.lease_ttl) or seen_after(now) then
    dropped = 1
    drop_all()
    fleet = nil
  elseif not sums_recounted(fleet, now) then
    dropped = 2
    drop_all()
    fleet = nil
  end
end
if fleet ~= nil and fleet.settings ~= settings then
  if redis.call('ZCARD', SEEN) > 0 then
    save_fleet(fleet)
    return {1, 1, fleet.settings}
  end
  drop_all()
  fleet = nil
end
if fleet == nil then
  fleet = new_fleet(now)
end

-- 5. The process's record.
local previous = nil
local previous_text = redis.call('HGET', PROCS, id)
if previous_text then
  previous = parse_record(previous_text)
  if previous == nil then
    -- A corrupt record: the state cannot account for it. Start anew.
    dropped = 1
    drop_all()
    fleet = new_fleet(now)
  end
end
r.send_demand = smoothed_demand(previous, r.send_demand)
local counted = count_holding(fleet, previous, now)

-- 6. The tick; 7. the limiter.
local live = redis.call('ZCARD', SEEN)
local is_new = previous == nil
if is_new then
  live = live + 1
end
add_to_tick(fleet, is_new)
local per_report = admitted_per_report(fleet, live)
end_tick(fleet, live, now)
undo_cuts_made_without(fleet, is_new, now)
limiter_step(fleet, is_new, per_report, now)

-- 8. The budget.
local cap = cap_at(fleet, now)
if fleet.pool + fleet.leased > cap then
  fleet.pool = math.max(cap - fleet.leased, 0)
end
local tokens = fleet.pool + fleet.leased
local target
if fleet.leased > cap then
  target = floor_div(counted * floor_div(cap * PPM, fleet.leased), PPM)
elseif r.wanted > 0 then
  local share = floor_div(r.wanted * PPM, fleet.retry_demand)
  target = math.max(floor_div(tokens * share, PPM), s.retry_cost)
elseif is_new or fleet.retry_demand == 0 then
  target = floor_div(tokens, live)
else
  target = 0
end
local from_pool = math.min(target - counted, fleet.pool)
local held_after
if from_pool > 0 then
  fleet.pool = fleet.pool - from_pool
  fleet.leased = fleet.leased + from_pool
  held_after = counted + from_pool
else
  held_after = math.min(target, counted)
end
local share_ppm, send_rate = 0, 0
if fleet.engaged == 1 and fleet.send_demand > 0 then
  share_ppm = floor_div(r.send_demand * PPM, fleet.send_demand + fleet.departed_demand)
  send_rate = floor_div(fleet.fleet_rate * share_ppm, PPM)
end

local record = {
  lease = counted + math.max(from_pool, 0),
  owed = counted - math.min(held_after, counted),
  retry_demand = r.wanted,
  send_demand = r.send_demand,
}
redis.call('HSET', PROCS, id, record_text(record))
redis.call('ZADD', SEEN, fmt(now), id)
save_fleet(fleet)
-- Redis's own expiry of an abandoned scope (real time, not modelled): twice the longer of the
-- window and the lease, refreshed by every report.
local key_ttl = 2 * math.max(s.window, s.lease_ttl)
redis.call('PEXPIRE', STATE, key_ttl)
redis.call('PEXPIRE', PROCS, key_ttl)
redis.call('PEXPIRE', SEEN, key_ttl)

-- The fleet's tokens: none while the fleet's calls say the upstream is failing.
local fleet_tokens = math.min(fleet.pool + fleet.leased, cap)
if fleet_calls_failing(fleet) then
  fleet_tokens = 0
end
return {1, 0, held_after - r.held, cap, live, fleet.born, now, fleet.engaged, fleet.fleet_rate,
  share_ppm, send_rate, fleet_tokens, dropped}
