//! A dataset column: its name, its type, the SQL expression that reads it from the database, and
//! what it holds (the one description the schema, the reader and the documentation share).

use arrow_schema::{DataType, Field};

/// The types the dataset uses. Nanoseconds, ids and bytes are 64-bit integers; counts that a
/// window or pass bounds are 32-bit; names are UTF-8 (Parquet dictionary-encodes them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int64,
    Int32,
    Float64,
    Utf8,
    Bool,
    /// A list of doubles, read from a JSON array (a measurement's timed runs).
    Float64List,
}

impl Kind {
    pub fn data_type(self) -> DataType {
        match self {
            Kind::Int64 => DataType::Int64,
            Kind::Int32 => DataType::Int32,
            Kind::Float64 => DataType::Float64,
            Kind::Utf8 => DataType::Utf8,
            Kind::Bool => DataType::Boolean,
            Kind::Float64List => DataType::List(std::sync::Arc::new(Field::new(
                "item",
                DataType::Float64,
                false,
            ))),
        }
    }

    /// The name the documentation gives the type.
    pub fn doc_name(self) -> &'static str {
        match self {
            Kind::Int64 => "Int64",
            Kind::Int32 => "Int32",
            Kind::Float64 => "Float64",
            Kind::Utf8 => "Utf8",
            Kind::Bool => "Boolean",
            Kind::Float64List => "List<Float64>",
        }
    }
}

/// One column of a table.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub name: &'static str,
    pub kind: Kind,
    /// NULL where the database does not know the value.
    pub nullable: bool,
    /// The SQL expression read for it (in the table's FROM clause); `None` for a column of the
    /// run the rows belong to, filled from [`super::tables::RunContext`].
    pub sql: Option<&'static str>,
    pub doc: &'static str,
}

impl Column {
    pub fn field(&self) -> Field {
        Field::new(self.name, self.kind.data_type(), self.nullable)
    }
}

/// A nullable column read by `sql`.
pub const fn col(name: &'static str, kind: Kind, sql: &'static str, doc: &'static str) -> Column {
    Column {
        name,
        kind,
        nullable: true,
        sql: Some(sql),
        doc,
    }
}

/// A column that is never NULL, read by `sql`.
pub const fn key(name: &'static str, kind: Kind, sql: &'static str, doc: &'static str) -> Column {
    Column {
        name,
        kind,
        nullable: false,
        sql: Some(sql),
        doc,
    }
}

/// A column of the run the rows belong to, repeated on each row (no join across ranks needed).
pub const fn of_run(name: &'static str, kind: Kind, doc: &'static str) -> Column {
    Column {
        name,
        kind,
        nullable: true,
        sql: None,
        doc,
    }
}
