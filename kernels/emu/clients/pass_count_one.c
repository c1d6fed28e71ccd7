/* A pass count of 1: the replayed kernel's replay_pass_count returns 1 and a replay_continue is
 * set. What 1 means depends on the SDK build: by default the dispatch is not replayed (no PASS
 * callbacks, CONFIG EXIT at once, replay_continue never called); built with
 * -DKRP_PASS_COUNT_ONE_REPLAYS, for SDKs whose header reads "N > 0 => fixed loop of N passes",
 * it is a loop of one pass (one PASS ENTER/EXIT pair numbered 0 of 1, and no replay_continue
 * call, since it is the fixed loop's last pass). Either way the samples application's counter
 * reads 1 afterwards. */
#define KRP_CLIENT "krp-pass-count-one"
#include "krp_client.h"

static int configs = 0;
static int config_exits = 0;
static int pass_enters = 0;
static int pass_exits = 0;
static int continues = 0;

KRP_PASS_COUNT(pass_count, 1)

static int replay_continue(rocprofiler_kernel_dispatch_info_t info, uint64_t current,
                           uint64_t total, rocprofiler_user_data_t ud) {
    (void) info;
    (void) current;
    (void) total;
    (void) ud;
    ++continues;
    return 1;
}

static void replay_cb(rocprofiler_callback_tracing_record_t r, rocprofiler_user_data_t* ud,
                      void* data) {
    (void) ud;
    (void) data;
    rocprofiler_callback_tracing_kernel_replay_data_t* p = krp_payload(r);
    if(p->dispatch_info.workgroup_size.x != KRP_REPLAY_BLOCK) return;
    if(r.operation == KRP_REPLAY_CONFIG && r.phase == KRP_PHASE_ENTER) {
        ++configs;
        p->replay_pass_count = pass_count;
        p->replay_continue = replay_continue;
    } else if(r.operation == KRP_REPLAY_CONFIG) {
        ++config_exits;
        KRP_REQUIRE(p->replay_pass_count == pass_count, "CONFIG EXIT still shows replay_pass_count");
    } else if(r.phase == KRP_PHASE_ENTER) {
        KRP_REQUIRE(p->current_pass == 0 && p->total_passes == 1, "pass 0 of 1");
        KRP_REQUIRE(config_exits == 0, "the pass runs inside the CONFIG pair");
        ++pass_enters;
    } else {
        KRP_REQUIRE(pass_exits < pass_enters, "PASS EXIT follows its ENTER");
        ++pass_exits;
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
    fprintf(stderr, "[%s] configs=%d exits=%d pass_enters=%d pass_exits=%d continues=%d\n",
            KRP_CLIENT, configs, config_exits, pass_enters, pass_exits, continues);
    KRP_REQUIRE(configs == 1 && config_exits == 1, "one CONFIG pair for the kernel");
#ifdef KRP_PASS_COUNT_ONE_REPLAYS
    KRP_REQUIRE(pass_enters == 1 && pass_exits == 1, "a pass count of 1 is a loop of one pass");
#else
    KRP_REQUIRE(pass_enters == 0 && pass_exits == 0, "a pass count of 1 is not replayed");
#endif
    KRP_REQUIRE(continues == 0, "replay_continue is not consulted after a fixed loop's last pass");
}

KRP_CONFIGURE(tool_init, tool_fini)
