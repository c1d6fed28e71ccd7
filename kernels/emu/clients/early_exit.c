/* Early exit: 4 passes requested, replay_continue returns current_pass < 1, so 2 passes run,
 * each with its counter record. */
#define KRP_CLIENT "krp-early-exit"
#include "krp_counters.h"

static int passes_seen = 0;
static int continues = 0;

KRP_PASS_COUNT(pass_count, 4)

static int replay_continue(rocprofiler_kernel_dispatch_info_t info, uint64_t current,
                           uint64_t total, rocprofiler_user_data_t ud) {
    (void) info;
    (void) ud;
    KRP_REQUIRE(total == 4, "total_passes is the count asked for");
    ++continues;
    return current < 1;
}

static void replay_cb(rocprofiler_callback_tracing_record_t r, rocprofiler_user_data_t* ud,
                      void* data) {
    (void) ud;
    (void) data;
    rocprofiler_callback_tracing_kernel_replay_data_t* p = krp_payload(r);
    if(p->dispatch_info.workgroup_size.x != KRP_REPLAY_BLOCK) return;
    if(r.operation == KRP_REPLAY_CONFIG && r.phase == KRP_PHASE_ENTER) {
        p->replay_pass_count = pass_count;
        p->replay_continue = replay_continue;
    }
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
    fprintf(stderr, "[%s] passes=%d continues=%d records=%d\n", KRP_CLIENT, passes_seen,
            continues, krp_records_replayed);
    KRP_REQUIRE(passes_seen == 2, "2 of 4 passes");
    KRP_REQUIRE(continues == 2, "replay_continue after passes 0 and 1");
    KRP_REQUIRE(krp_records_replayed == 2, "one counter record per executed pass");
    KRP_REQUIRE(krp_records_opted_out == 1, "one record for the dispatch that ran once");
}

KRP_CONFIGURE(tool_init, tool_fini)
