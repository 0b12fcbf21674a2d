//! Which master of a Redis Cluster serves which slots, as `CLUSTER SLOTS` says: read by a
//! process to choose which of its scopes share a pipeline (one per master). Where a command
//! goes, and every redirection (`MOVED`, `ASK`), stays redis-rs' cluster client's: a map out of
//! date only puts scopes of two masters in one pipeline, which the client then refuses as a
//! whole (the scopes are synced one by one until the map is read again).

use std::collections::BTreeMap;

use redis::Value;

/// The slots of a Redis Cluster (Redis docs, "Redis cluster specification": 16384 slots, a
/// key's slot the CRC16 of its hash tag modulo 16384).
pub(crate) const SLOTS: u16 = 16_384;

/// The slot of `key`: CRC16 (XMODEM) of its hash tag (the part between the first `{` and the
/// next `}`, if not empty) or of the whole key, modulo 16384.
pub(crate) fn slot_of(key: &str) -> u16 {
    let bytes = key.as_bytes();
    let tagged = bytes.iter().position(|&b| b == b'{').and_then(|open| {
        let close = bytes[open + 1..].iter().position(|&b| b == b'}')?;
        let tag = &bytes[open + 1..open + 1 + close];
        (!tag.is_empty()).then_some(tag)
    });
    crc16::State::<crc16::XMODEM>::calculate(tagged.unwrap_or(bytes)) % SLOTS
}

/// The masters' slot ranges: `(first, last, master)`, sorted by `first`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SlotMap {
    ranges: Vec<(u16, u16, String)>,
}

impl SlotMap {
    /// Reads a `CLUSTER SLOTS` reply: `[[first, last, [host, port, id, ...], replicas...],
    /// ...]`; a master is named by its id (its host and port when the reply has none). Entries
    /// that are not ranges are skipped: an empty map groups nothing.
    pub(crate) fn from_cluster_slots(value: &Value) -> Self {
        let Value::Array(entries) = value else {
            return Self::default();
        };
        let mut ranges: Vec<(u16, u16, String)> = entries
            .iter()
            .filter_map(|entry| {
                let Value::Array(fields) = entry else {
                    return None;
                };
                let first = slot_number(fields.first()?)?;
                let last = slot_number(fields.get(1)?)?;
                let master = node_name(fields.get(2)?)?;
                (first <= last).then_some((first, last, master))
            })
            .collect();
        ranges.sort_by_key(|range| range.0);
        Self { ranges }
    }

    /// The master serving `slot`, if the map knows it.
    pub(crate) fn master_of(&self, slot: u16) -> Option<&str> {
        let index = self.ranges.partition_point(|(first, _, _)| *first <= slot);
        let (_, last, master) = self.ranges.get(index.checked_sub(1)?)?;
        (slot <= *last).then_some(master.as_str())
    }

    /// The indices of `slots`, grouped by the master serving them (in order of first
    /// appearance); a slot no master is known for is a group of its own.
    pub(crate) fn group(&self, slots: &[u16]) -> Vec<Vec<usize>> {
        let mut by_master: BTreeMap<&str, usize> = BTreeMap::new();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (index, &slot) in slots.iter().enumerate() {
            match self.master_of(slot) {
                Some(master) => {
                    let group = *by_master.entry(master).or_insert_with(|| {
                        groups.push(Vec::new());
                        groups.len() - 1
                    });
                    groups[group].push(index);
                }
                None => groups.push(vec![index]),
            }
        }
        groups
    }
}

fn slot_number(value: &Value) -> Option<u16> {
    match value {
        Value::Int(number) => u16::try_from(*number).ok().filter(|slot| *slot < SLOTS),
        _ => None,
    }
}

/// A node of a `CLUSTER SLOTS` entry, `[host, port, id, ...]`: its id, or `host:port`.
fn node_name(value: &Value) -> Option<String> {
    let Value::Array(fields) = value else {
        return None;
    };
    let text = |value: &Value| match value {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).ok(),
        Value::SimpleString(text) => Some(text.clone()),
        Value::Int(number) => Some(number.to_string()),
        _ => None,
    };
    if let Some(id) = fields.get(2).and_then(text) {
        return Some(id);
    }
    Some(format!(
        "{}:{}",
        text(fields.first()?)?,
        text(fields.get(1)?)?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(text: &str) -> Value {
        Value::BulkString(text.as_bytes().to_vec())
    }

    fn range(first: i64, last: i64, id: &str) -> Value {
        Value::Array(vec![
            Value::Int(first),
            Value::Int(last),
            Value::Array(vec![bulk("127.0.0.1"), Value::Int(7000), bulk(id)]),
            Value::Array(vec![bulk("127.0.0.1"), Value::Int(7003), bulk("replica")]),
        ])
    }

    #[test]
    fn slots_follow_the_cluster_specification() {
        // The specification's example: CRC16 of "123456789" is 0x31C3.
        assert_eq!(slot_of("123456789"), 0x31C3);
        // One scope's keys share the hash tag, so the slot.
        assert_eq!(
            slot_of("retry:{inventory}:v1:state"),
            slot_of("retry:{inventory}:v1:seen")
        );
        assert_eq!(slot_of("retry:{inventory}:v1:state"), slot_of("inventory"));
        // An empty tag is no tag: the whole key.
        assert_eq!(
            slot_of("a{}b"),
            crc16::State::<crc16::XMODEM>::calculate(b"a{}b") % SLOTS
        );
    }

    #[test]
    fn scopes_are_grouped_by_the_master_of_their_slot() {
        let map = SlotMap::from_cluster_slots(&Value::Array(vec![
            range(5461, 10922, "b"),
            range(0, 5460, "a"),
            range(10923, 16383, "c"),
            Value::Int(3),
        ]));
        assert_eq!(map.master_of(0), Some("a"));
        assert_eq!(map.master_of(5461), Some("b"));
        assert_eq!(map.master_of(16383), Some("c"));
        assert_eq!(
            map.group(&[0, 16000, 100, 6000, 16383]),
            [vec![0, 2], vec![1, 4], vec![3]]
        );
        let empty = SlotMap::default();
        assert_eq!(empty.group(&[1, 1]), [vec![0], vec![1]]);
    }

    #[test]
    fn a_map_with_a_hole_leaves_its_slots_alone() {
        let map = SlotMap::from_cluster_slots(&Value::Array(vec![range(0, 99, "a")]));
        assert_eq!(map.master_of(100), None);
        assert_eq!(map.group(&[5, 200, 7]), [vec![0, 2], vec![1]]);
    }
}
