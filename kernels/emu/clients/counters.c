/* Counters: 3 passes of the replayed kernel, one counter per pass picked from the pass index
 * saved at PASS ENTER; exactly one record per pass, and one for the opted-out kernel. */
#define KRP_CLIENT "krp-counters"
#include "krp_counters.h"

static int passes_seen = 0;

KRP_PASS_COUNT(pass_count, 3)

static void replay_cb(rocprofiler_callback_tracing_record_t r, rocprofiler_user_data_t* ud,
                      void* data) {
    (void) ud;
    (void) data;
    rocprofiler_callback_tracing_kernel_replay_data_t* p = krp_payload(r);
    if(p->dispatch_info.workgroup_size.x != KRP_REPLAY_BLOCK) return;
    if(r.operation == KRP_REPLAY_CONFIG && r.phase == KRP_PHASE_ENTER) p->replay_pass_count = pass_count;
    if(r.operation == KRP_REPLAY_PASS && r.phase == KRP_PHASE_ENTER) {
        krp_tl_pass = p->current_pass;
        ++passes_seen;
    }
}

static int tool_init(rocprofiler_client_finalize_t f, void* data) {
    (void) f;
    (void) data;
    krp_replay_service(replay_cb, NULL);
    krp_counting_service();
    return 0;
}

static void tool_fini(void* data) {
    (void) data;
    fprintf(stderr, "[%s] passes=%d records=%d opted_out_records=%d\n", KRP_CLIENT, passes_seen,
            krp_records_replayed, krp_records_opted_out);
    KRP_REQUIRE(passes_seen == 3, "3 passes");
    KRP_REQUIRE(krp_records_replayed == 3, "exactly one counter record per executed pass");
    KRP_REQUIRE(krp_records_opted_out == 1, "one record for the dispatch that ran once");
}

KRP_CONFIGURE(tool_init, tool_fini)
