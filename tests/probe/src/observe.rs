//! What the probe saw, kept as JSON arrays per category and written to `PROBE_OUT` at finalize.

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

#[derive(Default)]
pub struct Obs {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    fields: Map<String, Value>,
    kernels: BTreeMap<u64, String>,
}

pub fn obs() -> &'static Obs {
    static O: OnceLock<Obs> = OnceLock::new();
    O.get_or_init(Obs::default)
}

impl Obs {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set(&self, key: &str, v: Value) {
        self.lock().fields.insert(key.to_string(), v);
    }

    pub fn push(&self, key: &str, v: Value) {
        let mut g = self.lock();
        let e = g.fields.entry(key.to_string()).or_insert_with(|| json!([]));
        if let Value::Array(a) = e {
            a.push(v);
        }
    }

    pub fn count(&self, key: &str) -> usize {
        self.lock()
            .fields
            .get(key)
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
    }

    pub fn add_kernel(&self, id: u64, name: String) {
        self.lock().kernels.insert(id, name);
    }

    pub fn kernel_name(&self, id: u64) -> Option<String> {
        self.lock().kernels.get(&id).cloned()
    }

    pub fn write_out(&self) {
        let Some(path) = std::env::var_os("PROBE_OUT").filter(|p| !p.is_empty()) else {
            return;
        };
        let mut g = self.lock();
        let kernels: Map<String, Value> = g
            .kernels
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        g.fields.insert("kernels".into(), Value::Object(kernels));
        let text = Value::Object(g.fields.clone()).to_string();
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!(
                "krphase-probe: cannot write PROBE_OUT {}: {e}",
                path.to_string_lossy()
            );
        }
    }
}
