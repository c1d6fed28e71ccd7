/* Basic: the status strings are the SDK's; the replayed kernel asks for 4 passes at CONFIG
 * ENTER; expects one replayed dispatch, 4 passes numbered 0..3 with total_passes 4, one
 * dispatch id throughout, and CONFIG EXIT still showing the pass-count callback it set. */
#define KRP_CLIENT "krp-basic"
#include "krp_client.h"
#include <string.h>

static int replayed = 0;
static int passes_seen = 0;
static uint64_t dispatch_id = 0;

KRP_PASS_COUNT(pass_count, 4)

static void replay_cb(rocprofiler_callback_tracing_record_t r, rocprofiler_user_data_t* ud,
                      void* data) {
    (void) ud;
    (void) data;
    rocprofiler_callback_tracing_kernel_replay_data_t* p = krp_payload(r);
    KRP_REQUIRE(p->size == 184, "the payload's size field is 184 in both layouts");
    if(p->dispatch_info.workgroup_size.x != KRP_REPLAY_BLOCK) return;
    if(r.operation == KRP_REPLAY_CONFIG && r.phase == KRP_PHASE_ENTER) {
        p->replay_pass_count = pass_count;
        dispatch_id = p->dispatch_info.dispatch_id;
        ++replayed;
    } else if(r.operation == KRP_REPLAY_CONFIG) {
        KRP_REQUIRE(p->replay_pass_count == pass_count, "CONFIG EXIT still shows replay_pass_count");
    } else if(r.operation == KRP_REPLAY_PASS && r.phase == KRP_PHASE_ENTER) {
        KRP_REQUIRE(p->current_pass == (uint64_t) passes_seen, "passes numbered 0, 1, 2, 3");
        KRP_REQUIRE(p->total_passes == 4, "total_passes is 4");
        KRP_REQUIRE(p->dispatch_info.dispatch_id == dispatch_id, "one dispatch id on every pass");
        KRP_REQUIRE(p->replay_pass_count == NULL, "config callbacks read NULL during a PASS");
        ++passes_seen;
    }
}

static int tool_init(rocprofiler_client_finalize_t f, void* data) {
    (void) f;
    (void) data;
    /* The status string is the SDK's message; the name is the enum's. */
    KRP_REQUIRE(strcmp(rocprofiler_get_status_string(4), "Kind ID not found") == 0,
                "rocprofiler_get_status_string gives the SDK's message");
    KRP_REQUIRE(strcmp(rocprofiler_get_status_name(4), "ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND") == 0,
                "rocprofiler_get_status_name gives the enum name");
    KRP_REQUIRE(rocprofiler_get_status_string(42) == NULL, "no string past the last status");
    krp_replay_service(replay_cb, NULL);
    return 0;
}

static void tool_fini(void* data) {
    (void) data;
    fprintf(stderr, "[%s] replayed=%d passes=%d\n", KRP_CLIENT, replayed, passes_seen);
    KRP_REQUIRE(replayed == 1, "one replayed dispatch");
    KRP_REQUIRE(passes_seen == 4, "4 passes");
}

KRP_CONFIGURE(tool_init, tool_fini)
