/* Opt-out: the replayed kernel gets 3 passes; every other dispatch keeps replay_pass_count NULL
 * and runs once (CONFIG ENTER then CONFIG EXIT, no PASS). */
#define KRP_CLIENT "krp-opt-out"
#include "krp_client.h"

static int configs = 0;
static int config_exits = 0;
static int passes_target = 0;
static int passes_other = 0;

KRP_PASS_COUNT(pass_count, 3)

static void replay_cb(rocprofiler_callback_tracing_record_t r, rocprofiler_user_data_t* ud,
                      void* data) {
    (void) ud;
    (void) data;
    rocprofiler_callback_tracing_kernel_replay_data_t* p = krp_payload(r);
    int target = p->dispatch_info.workgroup_size.x == KRP_REPLAY_BLOCK;
    if(r.operation == KRP_REPLAY_CONFIG && r.phase == KRP_PHASE_ENTER) {
        ++configs;
        if(target) p->replay_pass_count = pass_count;
    } else if(r.operation == KRP_REPLAY_CONFIG) {
        ++config_exits;
        KRP_REQUIRE(p->replay_pass_count == (target ? pass_count : NULL),
                    "CONFIG EXIT shows what CONFIG ENTER set");
    } else if(r.operation == KRP_REPLAY_PASS && r.phase == KRP_PHASE_ENTER) {
        if(target) ++passes_target;
        else ++passes_other;
    }
}

static int tool_init(rocprofiler_client_finalize_t f, void* data) {
    (void) f;
    (void) data;
    krp_replay_service(replay_cb, NULL);
    return 0;
}

static void tool_fini(void* data) {
    (void) data;
    fprintf(stderr, "[%s] configs=%d exits=%d target_passes=%d other_passes=%d\n", KRP_CLIENT,
            configs, config_exits, passes_target, passes_other);
    KRP_REQUIRE(configs == 2 && config_exits == 2, "CONFIG for both kernels");
    KRP_REQUIRE(passes_target == 3, "3 passes of the replayed kernel");
    KRP_REQUIRE(passes_other == 0, "the opted-out kernel runs once, without PASS callbacks");
}

KRP_CONFIGURE(tool_init, tool_fini)
