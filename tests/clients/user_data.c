/* User data: CONFIG ENTER stores a state pointer; every PASS ENTER starts from it and rewrites
 * its own copy; PASS EXIT sees that write and asks to stop after pass 1 (of 4). replay_continue
 * receives, by contract, the CONFIG value (default) or the pass's own copy (KRP_CONTINUE_PASS),
 * and aborts if it gets the other one. CONFIG EXIT sees the CONFIG value and still shows both
 * callbacks set at CONFIG ENTER. */
#define KRP_CLIENT "krp-user-data"
#include "krp_client.h"

typedef struct {
    int stop;
    int replayed;
    int passes_seen;
    int continues;
} state_t;

static state_t state = {0, 0, 0, 0};
static int scratch[4] = {0, 0, 0, 0};

static uint64_t pass_count(rocprofiler_kernel_dispatch_info_t info, rocprofiler_user_data_t ud) {
    (void) info;
    KRP_REQUIRE(ud.ptr == &state, "replay_pass_count receives the value stored at CONFIG ENTER");
    return 4;
}

static int replay_continue(rocprofiler_kernel_dispatch_info_t info, uint64_t current,
                           uint64_t total, rocprofiler_user_data_t ud) {
    (void) info;
    (void) total;
    ++state.continues;
#ifdef KRP_CONTINUE_PASS
    KRP_REQUIRE(ud.ptr == &scratch[current], "replay_continue gets this pass's own user_data");
    return current < 1;
#else
    KRP_REQUIRE(ud.ptr == &state, "replay_continue gets the CONFIG user_data");
    (void) current;
    return !((state_t*) ud.ptr)->stop;
#endif
}

static void replay_cb(rocprofiler_callback_tracing_record_t r, rocprofiler_user_data_t* ud,
                      void* data) {
    KRP_REQUIRE(data == &state, "callback data as configured");
    rocprofiler_callback_tracing_kernel_replay_data_t* p = krp_payload(r);
    if(p->dispatch_info.workgroup_size.x != KRP_REPLAY_BLOCK) return;
    if(r.operation == KRP_REPLAY_CONFIG && r.phase == KRP_PHASE_ENTER) {
        ud->ptr = &state;
        ++state.replayed;
        p->replay_pass_count = pass_count;
        p->replay_continue = replay_continue;
    } else if(r.operation == KRP_REPLAY_CONFIG) {
        KRP_REQUIRE(ud->ptr == &state, "CONFIG EXIT sees the CONFIG user_data");
        KRP_REQUIRE(p->replay_pass_count == pass_count, "CONFIG EXIT should still expose the config callbacks");
        KRP_REQUIRE(p->replay_continue == replay_continue, "CONFIG EXIT should still expose the config callbacks");
    } else if(r.phase == KRP_PHASE_ENTER) {
        KRP_REQUIRE(ud->ptr == &state, "PASS ENTER starts from the CONFIG value");
        KRP_REQUIRE(p->current_pass < 4, "pass in range");
        ++state.passes_seen;
        ud->ptr = &scratch[p->current_pass];
    } else {
        KRP_REQUIRE(ud->ptr == &scratch[p->current_pass], "PASS ENTER's write reaches PASS EXIT");
        if(p->current_pass >= 1) state.stop = 1;
    }
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
}

KRP_CONFIGURE(tool_init, tool_fini)
