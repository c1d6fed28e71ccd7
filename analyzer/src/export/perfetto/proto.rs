//! The subset of Perfetto's trace protos that `krphase export perfetto` writes, declared for
//! `prost`. Field numbers and types are those of Perfetto's `protos/perfetto/trace/*.proto` (v51):
//! `TracePacket`, `TracePacketDefaults` with `TrackEventDefaults`, `TrackDescriptor` with its process, thread and counter
//! descriptors, `TrackEvent`, `DebugAnnotation` and `InternedData`. Only documented fields are
//! declared; repeated scalars are unpacked, as those proto2 files declare them.

/// `TracePacket`: one record of the trace.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    #[prost(message, optional, tag = "12")]
    pub interned_data: Option<InternedData>,
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    #[prost(message, optional, tag = "59")]
    pub trace_packet_defaults: Option<TracePacketDefaults>,
    #[prost(oneof = "Data", tags = "11, 50, 60")]
    pub data: Option<Data>,
}

/// What a packet carries.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Data {
    #[prost(message, tag = "11")]
    TrackEvent(TrackEvent),
    /// Deflate-compressed (zlib) packets, each such packet under 512 KiB.
    #[prost(bytes, tag = "50")]
    CompressedPackets(Vec<u8>),
    #[prost(message, tag = "60")]
    TrackDescriptor(TrackDescriptor),
}

/// `TracePacketDefaults`: values every later packet of the sequence inherits.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacketDefaults {
    #[prost(uint32, optional, tag = "58")]
    pub timestamp_clock_id: Option<u32>,
    #[prost(message, optional, tag = "11")]
    pub track_event_defaults: Option<TrackEventDefaults>,
}

/// `TrackEventDefaults`: the track of every track event that names none.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEventDefaults {
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
}

/// `TrackDescriptor`: a process, thread, named or counter track.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ThreadDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub tid: Option<i32>,
    #[prost(string, optional, tag = "5")]
    pub thread_name: Option<String>,
}

/// `CounterDescriptor`; `unit` is its `Unit` enum (2 count, 3 bytes).
#[derive(Clone, PartialEq, prost::Message)]
pub struct CounterDescriptor {
    #[prost(int32, optional, tag = "3")]
    pub unit: Option<i32>,
}

/// `CounterDescriptor.Unit`.
pub const UNIT_COUNT: i32 = 2;
pub const UNIT_SIZE_BYTES: i32 = 3;

/// `TrackEvent.Type`.
pub const TYPE_SLICE_BEGIN: i32 = 1;
pub const TYPE_SLICE_END: i32 = 2;
pub const TYPE_INSTANT: i32 = 3;
pub const TYPE_COUNTER: i32 = 4;

/// `TracePacket.SequenceFlags`.
pub const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
pub const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;

/// `BuiltinClock.BUILTIN_CLOCK_BOOTTIME`: CLOCK_BOOTTIME, the clock of the SDK's records.
pub const BUILTIN_CLOCK_BOOTTIME: u32 = 6;

/// `TrackEvent`: a slice begin or end, an instant or a counter value, on `track_uuid`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    #[prost(uint64, repeated, packed = "false", tag = "3")]
    pub category_iids: Vec<u64>,
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    #[prost(uint64, optional, tag = "10")]
    pub name_iid: Option<u64>,
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    #[prost(int64, optional, tag = "30")]
    pub counter_value: Option<i64>,
    #[prost(fixed64, repeated, packed = "false", tag = "47")]
    pub flow_ids: Vec<u64>,
    #[prost(fixed64, repeated, packed = "false", tag = "48")]
    pub terminating_flow_ids: Vec<u64>,
}

/// `DebugAnnotation`: a named argument, its name and string value interned.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    #[prost(uint64, optional, tag = "1")]
    pub name_iid: Option<u64>,
    #[prost(bool, optional, tag = "2")]
    pub bool_value: Option<bool>,
    #[prost(int64, optional, tag = "4")]
    pub int_value: Option<i64>,
    #[prost(double, optional, tag = "5")]
    pub double_value: Option<f64>,
    #[prost(uint64, optional, tag = "17")]
    pub string_value_iid: Option<u64>,
}

/// `InternedData`: strings given an id (`iid`) once per sequence, referred to by id after.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedData {
    #[prost(message, repeated, tag = "1")]
    pub event_categories: Vec<Interned>,
    #[prost(message, repeated, tag = "2")]
    pub event_names: Vec<Interned>,
    #[prost(message, repeated, tag = "3")]
    pub debug_annotation_names: Vec<Interned>,
    #[prost(message, repeated, tag = "29")]
    pub debug_annotation_string_values: Vec<InternedBytes>,
}

/// `EventCategory`, `EventName` and `DebugAnnotationName` share this shape.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Interned {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

/// `InternedString` (its text is `bytes`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedBytes {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub str: Option<Vec<u8>>,
}
