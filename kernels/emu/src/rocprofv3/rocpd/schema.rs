//! The rocpd schema the stand-in writes: version 3.0.3 of rocprofiler-sdk's rocpd schema (its
//! tables, the un-suffixed views over them, and the data views readers query), written from
//! that version's table and column names and types.
//!
//! Every physical table is `rocpd_<name>_<uuid>` with a `guid` column, so that several
//! processes' databases can be viewed together; readers go through the un-suffixed views.

/// The schema version this module writes, as `rocpd_metadata` records it.
pub const VERSION: &str = "3.0.3";

/// Columns every table has after `id` and `guid` are given per table; `extdata` closes most.
const TABLES: &[(&str, &str)] = &[
    ("metadata", "tag TEXT NOT NULL|value TEXT NOT NULL"),
    ("string", "string TEXT NOT NULL UNIQUE"),
    (
        "info_node",
        "hash BIGINT NOT NULL UNIQUE|machine_id TEXT NOT NULL UNIQUE|system_name TEXT|hostname TEXT|\
         release TEXT|version TEXT|hardware_name TEXT|domain_name TEXT",
    ),
    (
        "info_process",
        "nid INTEGER NOT NULL|ppid INTEGER|pid INTEGER NOT NULL|init BIGINT|fini BIGINT|\
         start BIGINT|end BIGINT|command TEXT|environment JSONB NOT NULL DEFAULT '{}'|+",
    ),
    (
        "info_thread",
        "nid INTEGER NOT NULL|ppid INTEGER|pid INTEGER NOT NULL|tid INTEGER NOT NULL|name TEXT|\
         start BIGINT|end BIGINT|+",
    ),
    (
        "info_agent",
        "nid INTEGER NOT NULL|pid INTEGER NOT NULL|type TEXT CHECK (type IN ('CPU', 'GPU', 'NIC'))|\
         absolute_index INTEGER|logical_index INTEGER|type_index INTEGER|uuid INTEGER|name TEXT|\
         model_name TEXT|vendor_name TEXT|product_name TEXT|user_name TEXT|+",
    ),
    (
        "info_queue",
        "nid INTEGER NOT NULL|pid INTEGER NOT NULL|name TEXT|+",
    ),
    (
        "info_stream",
        "nid INTEGER NOT NULL|pid INTEGER NOT NULL|name TEXT|+",
    ),
    (
        "info_pmc",
        "nid INTEGER NOT NULL|pid INTEGER NOT NULL|agent_id INTEGER|\
         target_arch TEXT CHECK (target_arch IN ('CPU', 'GPU', 'NIC'))|event_code INT|\
         instance_id INTEGER|name TEXT NOT NULL|symbol TEXT NOT NULL|description TEXT|\
         long_description TEXT DEFAULT ''|component TEXT|units TEXT DEFAULT ''|\
         value_type TEXT CHECK (value_type IN ('ABS', 'ACCUM', 'RELATIVE'))|block TEXT|\
         expression TEXT|is_constant INTEGER|is_derived INTEGER|spm_support INTEGER|+",
    ),
    (
        "info_code_object",
        "nid INTEGER NOT NULL|pid INTEGER NOT NULL|agent_id INTEGER|uri TEXT|load_base BIGINT|\
         load_size BIGINT|load_delta BIGINT|storage_type TEXT CHECK (storage_type IN ('FILE', 'MEMORY'))|+",
    ),
    (
        "info_kernel_symbol",
        "nid INTEGER NOT NULL|pid INTEGER NOT NULL|code_object_id INTEGER NOT NULL|kernel_name TEXT|\
         display_name TEXT|kernel_object INTEGER|kernarg_segment_size INTEGER|\
         kernarg_segment_alignment INTEGER|group_segment_size INTEGER|private_segment_size INTEGER|\
         sgpr_count INTEGER|arch_vgpr_count INTEGER|accum_vgpr_count INTEGER|+",
    ),
    (
        "track",
        "nid INTEGER NOT NULL|pid INTEGER|tid INTEGER|name_id INTEGER|+",
    ),
    (
        "event",
        "category_id INTEGER|stack_id INTEGER|parent_stack_id INTEGER|correlation_id INTEGER|\
         call_stack JSONB NOT NULL DEFAULT '{}'|line_info JSONB NOT NULL DEFAULT '{}'|+",
    ),
    (
        "arg",
        "event_id INTEGER NOT NULL|position INTEGER NOT NULL|type TEXT NOT NULL|name TEXT NOT NULL|\
         value TEXT|+",
    ),
    (
        "pmc_event",
        "event_id INTEGER|sample_id INTEGER|pmc_id INTEGER NOT NULL|value REAL DEFAULT 0.0|\
         xcc INTEGER|shader_engine INTEGER|instance INTEGER|extdata JSONB DEFAULT '{}'",
    ),
    (
        "region",
        "nid INTEGER NOT NULL|pid INTEGER NOT NULL|tid INTEGER NOT NULL|start BIGINT NOT NULL|\
         end BIGINT NOT NULL|name_id INTEGER NOT NULL|event_id INTEGER|+",
    ),
    (
        "sample",
        "track_id INTEGER NOT NULL|timestamp BIGINT NOT NULL|event_id INTEGER|+",
    ),
    (
        "kernel_dispatch",
        "nid INTEGER NOT NULL|pid INTEGER NOT NULL|tid INTEGER|agent_id INTEGER NOT NULL|\
         kernel_id INTEGER NOT NULL|dispatch_id INTEGER NOT NULL|queue_id INTEGER NOT NULL|\
         stream_id INTEGER NOT NULL|start BIGINT NOT NULL|end BIGINT NOT NULL|\
         private_segment_size INTEGER|group_segment_size INTEGER|\
         workgroup_size_x INTEGER NOT NULL|workgroup_size_y INTEGER NOT NULL|\
         workgroup_size_z INTEGER NOT NULL|grid_size_x INTEGER NOT NULL|\
         grid_size_y INTEGER NOT NULL|grid_size_z INTEGER NOT NULL|\
         graph_exec_id INTEGER NOT NULL DEFAULT 0|graph_node_id INTEGER NOT NULL DEFAULT 0|\
         region_name_id INTEGER|event_id INTEGER|+",
    ),
    (
        "memory_copy",
        "nid INTEGER NOT NULL|pid INTEGER NOT NULL|tid INTEGER|start BIGINT NOT NULL|\
         end BIGINT NOT NULL|name_id INTEGER NOT NULL|dst_agent_id INTEGER|dst_address INTEGER|\
         src_agent_id INTEGER|src_address INTEGER|size INTEGER NOT NULL|queue_id INTEGER|\
         stream_id INTEGER|graph_exec_id INTEGER NOT NULL DEFAULT 0|\
         graph_node_id INTEGER NOT NULL DEFAULT 0|region_name_id INTEGER|event_id INTEGER|+",
    ),
    (
        "memory_allocate",
        "nid INTEGER NOT NULL|pid INTEGER NOT NULL|tid INTEGER|agent_id INTEGER|\
         type TEXT CHECK (type IN ('ALLOC', 'FREE', 'REALLOC', 'RECLAIM'))|\
         level TEXT CHECK (level IN ('REAL', 'VIRTUAL', 'SCRATCH'))|start BIGINT NOT NULL|\
         end BIGINT NOT NULL|address INTEGER|size INTEGER NOT NULL|queue_id INTEGER|\
         stream_id INTEGER|event_id INTEGER|+",
    ),
    (
        "graph_launch",
        "nid INTEGER NOT NULL|pid INTEGER NOT NULL|tid INTEGER|agent_id INTEGER|queue_id INTEGER|\
         start BIGINT NOT NULL|end BIGINT NOT NULL|graph_exec_id INTEGER NOT NULL|\
         kernel_dispatch_count INTEGER NOT NULL DEFAULT 0|event_id INTEGER|+",
    ),
    (
        "event_operation",
        "nid INTEGER NOT NULL|pid INTEGER NOT NULL|tid INTEGER|agent_id INTEGER NOT NULL|\
         event_obj INTEGER NOT NULL|type_id INTEGER NOT NULL|issue_id INTEGER NOT NULL|\
         queue_id INTEGER NOT NULL|stream_id INTEGER NOT NULL|start BIGINT NOT NULL|\
         end BIGINT NOT NULL|type TEXT CHECK (type IN ('WAIT', 'SIGNAL'))|event_id INTEGER",
    ),
];

/// Quotes a column definition's leading name (`start`, `end`, `type` are SQL words).
fn column(def: &str) -> String {
    let def = def.trim();
    match def.split_once(' ') {
        Some((name, rest)) => format!("\"{name}\" {rest}"),
        None => format!("\"{def}\""),
    }
}

/// The statements creating the tables (`rocpd_<name><uuid>`, `uuid` carrying its leading `_`)
/// and their un-suffixed views.
pub fn tables_and_views(uuid: &str, guid: &str) -> String {
    let mut sql = String::new();
    for (name, cols) in TABLES {
        let mut defs = vec!["\"id\" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT".to_string()];
        if *name != "metadata" {
            defs.push(format!("\"guid\" TEXT NOT NULL DEFAULT '{guid}'"));
        }
        for c in cols.split('|') {
            defs.push(if c.trim() == "+" {
                "\"extdata\" JSONB NOT NULL DEFAULT '{}'".to_string()
            } else {
                column(c)
            });
        }
        sql += &format!(
            "CREATE TABLE \"rocpd_{name}{uuid}\" ({});\n\
             CREATE VIEW \"rocpd_{name}\" AS SELECT * FROM \"rocpd_{name}{uuid}\";\n",
            defs.join(", ")
        );
    }
    sql + DATA_VIEWS
}

/// The data views the stand-in's databases carry: the ones over processes, kernels and
/// counters (the version's views over regions, samples, memory and graphs need tables the
/// stand-in leaves empty, and are left out). Joins match on `(id, guid)`.
const DATA_VIEWS: &str = r#"
CREATE VIEW processes AS
  SELECT N.id AS nid, N.machine_id, N.system_name, N.hostname, N.release AS system_release,
         N.version AS system_version, P.guid, P.ppid, P.pid, P.init, P.start, P."end", P.fini,
         P.command
  FROM rocpd_info_process P JOIN rocpd_info_node N ON N.id = P.nid AND N.guid = P.guid;
CREATE VIEW threads AS
  SELECT N.id AS nid, N.machine_id, N.system_name, N.hostname, N.release AS system_release,
         N.version AS system_version, P.guid, P.ppid, P.pid, T.tid, T.start, T."end", T.name
  FROM rocpd_info_thread T
  JOIN rocpd_info_process P ON P.id = T.pid AND P.guid = T.guid
  JOIN rocpd_info_node N ON N.id = T.nid AND N.guid = T.guid;
CREATE VIEW kernel_symbols AS
  SELECT KS.id, KS.guid, KS.nid, P.pid, KS.code_object_id, KS.kernel_name, KS.display_name,
         KS.kernel_object, KS.kernarg_segment_size, KS.kernarg_segment_alignment,
         KS.group_segment_size, KS.private_segment_size, KS.sgpr_count, KS.arch_vgpr_count,
         KS.accum_vgpr_count
  FROM rocpd_info_kernel_symbol KS JOIN rocpd_info_process P ON P.id = KS.pid AND P.guid = KS.guid;
CREATE VIEW kernels AS
  SELECT K.id, K.guid, T.tid,
         (SELECT string FROM rocpd_string RS WHERE RS.id = E.category_id AND RS.guid = E.guid) AS category,
         R.string AS region, S.display_name AS name, K.nid, P.pid,
         A.absolute_index AS agent_abs_index, A.logical_index AS agent_log_index,
         A.type_index AS agent_type_index, A.type AS agent_type, S.code_object_id,
         K.kernel_id, K.dispatch_id, K.stream_id, K.queue_id, K.graph_exec_id, K.graph_node_id,
         Q.name AS queue, ST.name AS stream, K.start, K."end", K."end" - K.start AS duration,
         K.grid_size_x AS grid_x, K.grid_size_y AS grid_y, K.grid_size_z AS grid_z,
         K.workgroup_size_x AS workgroup_x, K.workgroup_size_y AS workgroup_y,
         K.workgroup_size_z AS workgroup_z, K.group_segment_size AS lds_size,
         K.private_segment_size AS scratch_size, S.arch_vgpr_count AS vgpr_count,
         S.accum_vgpr_count, S.sgpr_count, S.group_segment_size AS static_lds_size,
         S.private_segment_size AS static_scratch_size, K.event_id, E.stack_id,
         E.parent_stack_id, E.correlation_id AS corr_id
  FROM rocpd_kernel_dispatch K
  JOIN rocpd_info_agent A ON A.id = K.agent_id AND A.guid = K.guid
  JOIN rocpd_event E ON E.id = K.event_id AND E.guid = K.guid
  JOIN rocpd_string R ON R.id = K.region_name_id AND R.guid = K.guid
  JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid
  LEFT JOIN rocpd_info_stream ST ON ST.id = K.stream_id AND ST.guid = K.guid
  LEFT JOIN rocpd_info_queue Q ON Q.id = K.queue_id AND Q.guid = K.guid
  JOIN rocpd_info_process P ON P.id = Q.pid AND P.guid = Q.guid
  JOIN rocpd_info_thread T ON T.id = K.tid AND T.guid = K.guid;
CREATE VIEW pmc_info AS
  SELECT PI.id, PI.guid, PI.nid, P.pid, A.absolute_index AS agent_abs_index, PI.is_constant,
         PI.is_derived, PI.name, PI.description, PI.block, PI.expression
  FROM rocpd_info_pmc PI
  JOIN rocpd_info_agent A ON A.id = PI.agent_id AND A.guid = PI.guid
  JOIN rocpd_info_process P ON P.id = PI.pid AND P.guid = PI.guid;
CREATE VIEW pmc_events AS
  SELECT PE.id, PE.guid, PE.pmc_id, E.id AS event_id,
         (SELECT string FROM rocpd_string RS WHERE RS.id = E.category_id AND RS.guid = E.guid) AS category,
         (SELECT display_name FROM rocpd_info_kernel_symbol KS WHERE KS.id = K.kernel_id AND KS.guid = K.guid) AS name,
         K.nid, P.pid, K.dispatch_id, K.start, K."end", K."end" - K.start AS duration,
         PI.name AS counter_name, PE.value AS counter_value
  FROM rocpd_pmc_event PE
  JOIN rocpd_info_pmc PI ON PI.id = PE.pmc_id AND PI.guid = PE.guid
  JOIN rocpd_event E ON E.id = PE.event_id AND E.guid = PE.guid
  JOIN rocpd_kernel_dispatch K ON K.event_id = PE.event_id AND K.guid = PE.guid
  JOIN rocpd_info_process P ON P.id = K.pid AND P.guid = K.guid;
CREATE VIEW counters_collection AS
  SELECT MIN(PE.id) AS id, PE.guid, K.dispatch_id, K.kernel_id, E.id AS event_id,
         E.correlation_id, E.stack_id, E.parent_stack_id, P.pid, T.tid, K.agent_id,
         A.absolute_index AS agent_abs_index, A.logical_index AS agent_log_index,
         A.type_index AS agent_type_index, A.type AS agent_type, K.queue_id,
         K.grid_size_x, K.grid_size_y, K.grid_size_z,
         K.grid_size_x * K.grid_size_y * K.grid_size_z AS grid_size,
         KS.display_name AS kernel_name,
         (SELECT string FROM rocpd_string RS WHERE RS.id = K.region_name_id AND RS.guid = K.guid) AS kernel_region,
         K.workgroup_size_x, K.workgroup_size_y, K.workgroup_size_z,
         K.workgroup_size_x * K.workgroup_size_y * K.workgroup_size_z AS workgroup_size,
         K.group_segment_size AS lds_block_size, K.private_segment_size AS scratch_size,
         KS.arch_vgpr_count AS vgpr_count, KS.accum_vgpr_count, KS.sgpr_count,
         PI.name AS counter_name, PI.symbol AS counter_symbol, PI.component, PI.description,
         PI.block, PI.expression, PI.value_type, PI.id AS counter_id, SUM(PE.value) AS value,
         K.start, K."end", PI.is_constant, PI.is_derived, K."end" - K.start AS duration,
         (SELECT string FROM rocpd_string RS WHERE RS.id = E.category_id AND RS.guid = E.guid) AS category,
         K.nid, E.extdata, KS.code_object_id
  FROM rocpd_pmc_event PE
  JOIN rocpd_info_pmc PI ON PI.id = PE.pmc_id AND PI.guid = PE.guid
  JOIN rocpd_event E ON E.id = PE.event_id AND E.guid = PE.guid
  JOIN rocpd_kernel_dispatch K ON K.event_id = PE.event_id AND K.guid = PE.guid
  JOIN rocpd_info_agent A ON A.id = K.agent_id AND A.guid = K.guid
  JOIN rocpd_info_kernel_symbol KS ON KS.id = K.kernel_id AND KS.guid = K.guid
  JOIN rocpd_info_process P ON P.id = K.pid AND P.guid = K.guid
  JOIN rocpd_info_thread T ON T.id = K.tid AND T.guid = K.guid
  WHERE PE.sample_id IS NULL
  GROUP BY PE.guid, K.dispatch_id, PI.name, K.agent_id;
"#;
