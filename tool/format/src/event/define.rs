//! The machinery behind the record-kind table in `kinds.rs`: from one description per kind,
//! [`record_kinds!`] generates the kind number, the typed [`super::Event`] variant, a typed
//! [`Record`] constructor (what the tool's hot path calls), the decoding, and the drop class.
//!
//! A field is stored in one *slot* of the record: `thread`, `small8`, `small16`, `payload0`,
//! `payload1`, `payload2`, one half of the last payload word (`payload2_low`: bits 0..32,
//! `payload2_high`: bits 32..64), or the 56 bits after the kind byte (`head56`: `small8`, then
//! `small16`, then `thread`, low bits first; a value must be below [`HEAD56_LIMIT`]). Values pass through [`RawField`], so each field's type states
//! how it is stored (a `bool` as 0/1, a [`Decision`] or [`Notice`] as its code).

use super::codes::{CounterValue, Decision, Notice};

/// A field value as the raw bits of its slot, and back (the slot keeps only its own width).
pub(crate) trait RawField: Copy {
    fn to_raw(self) -> u64;
    fn from_raw(raw: u64) -> Self;
}

macro_rules! raw_int {
    ($($t:ty),*) => {$(
        impl RawField for $t {
            #[inline(always)]
            fn to_raw(self) -> u64 {
                u64::from(self)
            }
            #[inline(always)]
            fn from_raw(raw: u64) -> Self {
                raw as $t
            }
        }
    )*};
}
raw_int!(u8, u16, u32, u64);

impl RawField for bool {
    #[inline(always)]
    fn to_raw(self) -> u64 {
        u64::from(self)
    }
    #[inline(always)]
    fn from_raw(raw: u64) -> Self {
        raw != 0
    }
}

impl RawField for Decision {
    #[inline(always)]
    fn to_raw(self) -> u64 {
        u64::from(self.to_u8())
    }
    #[inline(always)]
    fn from_raw(raw: u64) -> Self {
        Decision::from_u8(raw as u8)
    }
}

impl RawField for Notice {
    #[inline(always)]
    fn to_raw(self) -> u64 {
        u64::from(self.to_u8())
    }
    #[inline(always)]
    fn from_raw(raw: u64) -> Self {
        Notice::from_u8(raw as u8)
    }
}

impl RawField for CounterValue {
    #[inline(always)]
    fn to_raw(self) -> u64 {
        self.0.to_bits()
    }
    #[inline(always)]
    fn from_raw(raw: u64) -> Self {
        CounterValue(f64::from_bits(raw))
    }
}

/// Stores raw bits into one slot of a record that starts zeroed (the halves of `payload2` are
/// or-ed in, so the two may be stored in either order).
macro_rules! slot_put {
    ($r:ident, thread, $v:expr) => {
        $r.thread = $v as u32
    };
    ($r:ident, small8, $v:expr) => {
        $r.small8 = $v as u8
    };
    ($r:ident, small16, $v:expr) => {
        $r.small16 = $v as u16
    };
    ($r:ident, payload0, $v:expr) => {
        $r.payload[0] = $v
    };
    ($r:ident, payload1, $v:expr) => {
        $r.payload[1] = $v
    };
    ($r:ident, payload2, $v:expr) => {
        $r.payload[2] = $v
    };
    ($r:ident, payload2_low, $v:expr) => {
        $r.payload[2] |= $v & $crate::event::define::LOW_HALF_MASK
    };
    ($r:ident, payload2_high, $v:expr) => {
        $r.payload[2] |= $v << 32
    };
    ($r:ident, head56, $v:expr) => {{
        let v: u64 = $v;
        $r.small8 = v as u8;
        $r.small16 = (v >> 8) as u16;
        $r.thread = (v >> 24) as u32;
    }};
}

/// The raw bits of one slot.
macro_rules! slot_get {
    ($r:ident, thread) => {
        u64::from($r.thread)
    };
    ($r:ident, small8) => {
        u64::from($r.small8)
    };
    ($r:ident, small16) => {
        u64::from($r.small16)
    };
    ($r:ident, payload0) => {
        $r.payload[0]
    };
    ($r:ident, payload1) => {
        $r.payload[1]
    };
    ($r:ident, payload2) => {
        $r.payload[2]
    };
    ($r:ident, payload2_low) => {
        $r.payload[2] & $crate::event::define::LOW_HALF_MASK
    };
    ($r:ident, payload2_high) => {
        $r.payload[2] >> 32
    };
    ($r:ident, head56) => {
        u64::from($r.small8) | u64::from($r.small16) << 8 | u64::from($r.thread) << 24
    };
}

/// Values a `head56` slot holds are below this.
pub const HEAD56_LIMIT: u64 = 1 << 56;

/// The low half of a payload word (where a pass index sits).
pub(crate) const LOW_HALF_MASK: u64 = 0xffff_ffff;

/// The record-kind table. Each entry:
///
/// ```text
/// /// doc (for the kind number and the Event variant)
/// NUMBER KIND_CONST constructor Variant (DropClass) {
///     field: Type => slot,          // in the Event variant's field order
///     ...
/// } [record_only { field: Type => slot, ... }]
/// ```
///
/// `record_only` fields are written by the constructor but not part of the typed event (an
/// [`super::Event`] encodes them as 0).
macro_rules! record_kinds {
    ($(
        $(#[$doc:meta])*
        $num:literal $kind:ident $ctor:ident $variant:ident ($class:ident) {
            $( $(#[$fmeta:meta])* $field:ident : $fty:ty => $slot:ident ),* $(,)?
        }
        $( record_only { $( $rfield:ident : $rty:ty => $rslot:ident ),* $(,)? } )?
    )*) => {
        /// Record kind numbers (byte 0 of a record). Never renumber; add new kinds at the end.
        pub mod kind {
            $( $(#[$doc])* pub const $kind: u8 = $num; )*
        }

        /// A decoded event.
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(tag = "type", rename_all = "snake_case")]
        pub enum Event {
            $(
                $(#[$doc])*
                $variant { $( $(#[$fmeta])* $field: $fty, )* },
            )*
            /// A string-table entry.
            Name {
                space: NameSpace,
                key: u64,
                name: String,
            },
            /// A record kind this reader does not know (newer writer); kept raw.
            Unknown {
                kind: u8,
                #[serde(rename = "aux")]
                small8: u8,
                #[serde(rename = "x")]
                small16: u16,
                thread: u32,
                #[serde(rename = "w")]
                payload: [u64; 3],
            },
        }

        /// One constructor per kind, its arguments in the typed event's field order (then any
        /// `record_only` field). A thread id of 0 is filled in with the recording thread's.
        impl Record {
            $(
                $(#[$doc])*
                #[inline(always)]
                #[allow(clippy::too_many_arguments)] // reason: one argument per field of the kind
                pub fn $ctor($($field: $fty,)* $($($rfield: $rty,)*)?) -> Record {
                    let mut r = Record { kind: kind::$kind, ..Record::default() };
                    $( slot_put!(r, $slot, RawField::to_raw($field)); )*
                    $($( slot_put!(r, $rslot, RawField::to_raw($rfield)); )*)?
                    r
                }
            )*
        }

        impl Event {
            /// The raw record for this event (`None` for [`Event::Name`], which lives in a
            /// string block).
            pub fn to_record(&self) -> Option<Record> {
                Some(match *self {
                    $(
                        Event::$variant { $($field,)* } => {
                            Record::$ctor($($field,)* $($(<$rty>::default(),)*)?)
                        }
                    )*
                    Event::Name { .. } => return None,
                    Event::Unknown { kind, small8, small16, thread, payload } => Record {
                        kind,
                        small8,
                        small16,
                        thread,
                        payload,
                    },
                })
            }

            /// Decodes a raw record.
            pub fn from_record(r: &Record) -> Event {
                match r.kind {
                    $(
                        kind::$kind => Event::$variant {
                            $( $field: RawField::from_raw(slot_get!(r, $slot)), )*
                        },
                    )*
                    _ => Event::Unknown {
                        kind: r.kind,
                        small8: r.small8,
                        small16: r.small16,
                        thread: r.thread,
                        payload: r.payload,
                    },
                }
            }
        }

        /// The drop class of a record (a kind this crate does not know counts as a window
        /// record: it is never dropped).
        #[inline]
        pub fn drop_class(r: &Record) -> DropClass {
            match r.kind {
                $( kind::$kind => DropClass::$class, )*
                _ => DropClass::Window,
            }
        }
    };
}
