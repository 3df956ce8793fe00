//! A record's identity: a 64-bit hash of its name, scope, size, kind and members
//! (names, places and type sizes), computed without reading names that are offsets
//! into .debug_str, so a type already seen in another unit costs one hash. The hasher
//! is rustc-hash's FxHasher (fast on short keys; `Seen` re-hashes the u64 it returns).

use super::attrs::Str;
use super::builder::Builder;
use super::table::Node;
use gimli::AttributeValue;
use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};

impl Builder<'_, '_> {
    /// The identity of record `i`; equal records of different units hash alike.
    pub(super) fn identity(&mut self, i: usize) -> u64 {
        let mut h = FxHasher::default();
        let count = match &self.t.nodes[i] {
            Node::Record(r) => {
                hash_str(r.name, &mut h);
                hash_str(r.typedef_name, &mut h);
                r.scope.hash(&mut h);
                r.size.hash(&mut h);
                (r.kind as u8).hash(&mut h);
                r.members.len()
            }
            _ => 0,
        };
        for k in 0..count {
            let m = self.member_node(i, k);
            hash_str(m.name, &mut h);
            let place = (
                m.location,
                m.data_bit_offset,
                m.bit_offset4,
                m.bit_size,
                m.base,
            );
            place.hash(&mut h);
            if let Some(j) = self.target(m.ty) {
                self.size(j, 0).hash(&mut h);
            }
        }
        h.finish()
    }
}

/// Feed a name's identity to a hasher without reading the string when it is an
/// offset into .debug_str (equal strings share one offset in a linked binary).
fn hash_str<H: Hasher>(s: Option<Str<'_>>, h: &mut H) {
    match s {
        None => h.write_u8(0),
        Some(Str::Bytes(b)) => {
            h.write_u8(1);
            h.write(b);
        }
        Some(Str::Attr(AttributeValue::String(b))) => {
            h.write_u8(1);
            h.write(b.slice());
        }
        Some(Str::Attr(AttributeValue::DebugStrRef(o))) => {
            h.write_u8(2);
            h.write_u64(o.0 as u64);
        }
        Some(Str::Attr(AttributeValue::DebugStrOffsetsIndex(o))) => {
            h.write_u8(3);
            h.write_u64(o.0 as u64);
        }
        Some(Str::Attr(AttributeValue::DebugLineStrRef(o))) => {
            h.write_u8(4);
            h.write_u64(o.0 as u64);
        }
        Some(Str::Attr(_)) => h.write_u8(5),
    }
}
