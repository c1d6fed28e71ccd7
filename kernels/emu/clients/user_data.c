/* User data: CONFIG ENTER stores a state pointer; every PASS ENTER starts from it and rewrites
 * its own copy; PASS EXIT sees that write, rewrites the copy again and asks to stop after pass 1
 * (of 4). replay_continue receives, by contract, the pass's own copy as PASS EXIT left it
 * (KRP_CONTINUE_PASS) or the CONFIG value (KRP_CONTINUE_CONFIG), and aborts if it gets anything
 * else. CONFIG EXIT sees the CONFIG value and still shows both callbacks set at CONFIG ENTER.
 * During a PASS the config callbacks read NULL at ENTER; the start/stop toggles are set at
 * ENTER and NULL at EXIT (and at CONFIG). */
#define KRP_CLIENT "krp-user-data"
#include "krp_client.h"

#if defined(KRP_CONTINUE_PASS) == defined(KRP_CONTINUE_CONFIG)
#error "compile with exactly one of -DKRP_CONTINUE_PASS and -DKRP_CONTINUE_CONFIG"
#endif

typedef struct {
    int stop;
    int replayed;
    int passes_seen;
    int continues;
} state_t;

static state_t state = {0, 0, 0, 0};
/* Distinct addresses a PASS ENTER and a PASS EXIT park in their pass's copy of user_data. */
static int enter_scratch[4] = {0, 0, 0, 0};
static int exit_scratch[4] = {0, 0, 0, 0};

static uint64_t pass_count(rocprofiler_kernel_dispatch_info_t info, rocprofiler_user_data_t ud) {
    (void) info;
    KRP_REQUIRE(ud.ptr == &state, "replay_pass_count receives the value stored at CONFIG ENTER");
    return 4;
}

static int replay_continue(rocprofiler_kernel_dispatch_info_t info, uint64_t current,
                           uint64_t total, rocprofiler_user_data_t ud) {
    (void) info;
    KRP_REQUIRE(total == 4 && current < 3, "never consulted after the last pass of a fixed loop");
    ++state.continues;
#ifdef KRP_CONTINUE_PASS
    KRP_REQUIRE(ud.ptr == &exit_scratch[current],
                "replay_continue gets this pass's own user_data as its PASS EXIT left it");
    return current < 1;
#else
    KRP_REQUIRE(ud.ptr == &state, "replay_continue gets the CONFIG user_data");
    return !((state_t*) ud.ptr)->stop;
#endif
}

static void config_cb(rocprofiler_callback_tracing_record_t r, rocprofiler_user_data_t* ud,
                      rocprofiler_callback_tracing_kernel_replay_data_t* p) {
    KRP_REQUIRE(p->replay_start_context == NULL && p->replay_stop_context == NULL,
                "no context toggles outside a PASS");
    if(r.phase == KRP_PHASE_ENTER) {
        ud->ptr = &state;
        ++state.replayed;
        p->replay_pass_count = pass_count;
        p->replay_continue = replay_continue;
        return;
    }
    KRP_REQUIRE(ud->ptr == &state, "CONFIG EXIT sees the CONFIG user_data");
    KRP_REQUIRE(p->replay_pass_count == pass_count, "CONFIG EXIT should still expose the config callbacks");
    KRP_REQUIRE(p->replay_continue == replay_continue, "CONFIG EXIT should still expose the config callbacks");
}

static void pass_cb(rocprofiler_callback_tracing_record_t r, rocprofiler_user_data_t* ud,
                    rocprofiler_callback_tracing_kernel_replay_data_t* p) {
    KRP_REQUIRE(p->current_pass < 4 && p->total_passes == 4, "pass in range of 4");
    KRP_REQUIRE(p->replay_pass_count == NULL, "replay_pass_count reads NULL during a PASS");
    if(r.phase == KRP_PHASE_ENTER) {
        KRP_REQUIRE(ud->ptr == &state, "PASS ENTER starts from the CONFIG value");
        KRP_REQUIRE(p->replay_continue == NULL, "replay_continue reads NULL at PASS ENTER");
        KRP_REQUIRE(p->replay_start_context != NULL && p->replay_stop_context != NULL,
                    "PASS ENTER exposes the localized context toggles");
        ++state.passes_seen;
        ud->ptr = &enter_scratch[p->current_pass];
        return;
    }
    KRP_REQUIRE(ud->ptr == &enter_scratch[p->current_pass], "PASS ENTER's write reaches PASS EXIT");
    KRP_REQUIRE(p->replay_start_context == NULL && p->replay_stop_context == NULL,
                "context toggles are only valid during PASS ENTER");
    ud->ptr = &exit_scratch[p->current_pass];
    if(p->current_pass >= 1) state.stop = 1;
}

static void replay_cb(rocprofiler_callback_tracing_record_t r, rocprofiler_user_data_t* ud,
                      void* data) {
    KRP_REQUIRE(data == &state, "callback data as configured");
    rocprofiler_callback_tracing_kernel_replay_data_t* p = krp_payload(r);
    if(p->dispatch_info.workgroup_size.x != KRP_REPLAY_BLOCK) return;
    if(r.operation == KRP_REPLAY_CONFIG) config_cb(r, ud, p);
    else pass_cb(r, ud, p);
}

static int tool_init(rocprofiler_client_finalize_t f, void* data) {
    (void) f;
    (void) data;
    krp_replay_service(replay_cb, &state);
    return 0;
}

static void tool_fini(void* data) {
    (void) data;
    fprintf(stderr, "[%s] replayed=%d passes=%d continues=%d\n", KRP_CLIENT, state.replayed,
            state.passes_seen, state.continues);
    KRP_REQUIRE(state.replayed == 1, "one replayed dispatch");
    KRP_REQUIRE(state.passes_seen == 2, "stopped after 2 of 4 passes");
    KRP_REQUIRE(state.continues == 2, "replay_continue after passes 0 and 1");
    for(int i = 0; i < 4; ++i)
        KRP_REQUIRE(enter_scratch[i] == 0 && exit_scratch[i] == 0, "scratch never written");
}

KRP_CONFIGURE(tool_init, tool_fini)
