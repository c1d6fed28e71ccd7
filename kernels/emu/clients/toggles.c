/* Context toggles: 4 passes of the replayed kernel, with a second context running the dispatch
 * counting service. PASS ENTER of pass 0 stops that context for the replay loop; PASS ENTER of
 * pass 2 starts it again. A stop is sticky across passes, so the counting service is consulted
 * for passes 2 and 3 only, and the stop ends with the loop: the opted-out kernel, run once
 * afterwards, is counted. The toggles are set at PASS ENTER and NULL at PASS EXIT and CONFIG; a
 * toggle saved at ENTER and called at EXIT fails with CONTEXT_ERROR and changes nothing. */
#define KRP_CLIENT "krp-toggles"
#include "krp_client.h"

enum { KRP_STATUS_CONTEXT_ERROR = 9 };

static rocprofiler_context_id_t counting_ctx = {0};
static _Thread_local uint64_t tl_pass = 0;
static krp_context_cb_t saved_start = NULL;
static int passes_seen = 0;
static int counted_in_pass[4] = {0, 0, 0, 0};
static int counted_other = 0;

KRP_PASS_COUNT(pass_count, 4)

static void pass_enter(rocprofiler_callback_tracing_kernel_replay_data_t* p) {
    KRP_REQUIRE(p->replay_start_context != NULL && p->replay_stop_context != NULL,
                "PASS ENTER exposes the localized context toggles");
    KRP_REQUIRE(p->current_pass == (uint64_t) passes_seen, "passes numbered 0, 1, 2, 3");
    tl_pass = p->current_pass;
    ++passes_seen;
    if(p->current_pass == 0)
        KRP_CHECK(p->replay_stop_context(counting_ctx));
    else if(p->current_pass == 2)
        KRP_CHECK(p->replay_start_context(counting_ctx));
    saved_start = p->replay_start_context;
}

static void pass_exit(rocprofiler_callback_tracing_kernel_replay_data_t* p) {
    KRP_REQUIRE(p->replay_start_context == NULL && p->replay_stop_context == NULL,
                "context toggles are only valid during PASS ENTER");
    /* After pass 0 the context is stopped: a stray start must not undo that. */
    if(p->current_pass == 0)
        KRP_REQUIRE(saved_start(counting_ctx) == KRP_STATUS_CONTEXT_ERROR,
                    "a toggle called outside PASS ENTER fails with CONTEXT_ERROR");
}

static void replay_cb(rocprofiler_callback_tracing_record_t r, rocprofiler_user_data_t* ud,
                      void* data) {
    (void) ud;
    (void) data;
    rocprofiler_callback_tracing_kernel_replay_data_t* p = krp_payload(r);
    if(p->dispatch_info.workgroup_size.x != KRP_REPLAY_BLOCK) return;
    if(r.operation == KRP_REPLAY_CONFIG) {
        KRP_REQUIRE(p->replay_start_context == NULL && p->replay_stop_context == NULL,
                    "no context toggles at CONFIG");
        if(r.phase == KRP_PHASE_ENTER) p->replay_pass_count = pass_count;
    } else if(r.phase == KRP_PHASE_ENTER) {
        pass_enter(p);
    } else {
        pass_exit(p);
    }
}

static void dispatch_cb(rocprofiler_dispatch_counting_service_data_t d,
                        rocprofiler_counter_config_id_t* config, rocprofiler_user_data_t* ud,
                        void* data) {
    (void) config; /* left 0: count nothing */
    (void) ud;
    (void) data;
    uint32_t block = d.dispatch_info.workgroup_size.x;
    if(block == KRP_REPLAY_BLOCK) {
        KRP_REQUIRE(tl_pass < 4, "pass index in range");
        ++counted_in_pass[tl_pass];
    } else if(block == KRP_OPT_OUT_BLOCK) {
        ++counted_other;
    }
}

static void record_cb(rocprofiler_dispatch_counting_service_data_t d,
                      rocprofiler_counter_record_t* records, size_t n, rocprofiler_user_data_t ud,
                      void* data) {
    (void) d;
    (void) records;
    (void) n;
    (void) ud;
    (void) data;
}

static int tool_init(rocprofiler_client_finalize_t f, void* data) {
    (void) f;
    (void) data;
    krp_replay_service(replay_cb, NULL);
    KRP_CHECK(rocprofiler_create_context(&counting_ctx));
    KRP_CHECK(rocprofiler_configure_callback_dispatch_counting_service(counting_ctx, dispatch_cb,
                                                                       NULL, record_cb, NULL));
    KRP_CHECK(rocprofiler_start_context(counting_ctx));
    return 0;
}

static void tool_fini(void* data) {
    (void) data;
    fprintf(stderr, "[%s] passes=%d counted=%d,%d,%d,%d other=%d\n", KRP_CLIENT, passes_seen,
            counted_in_pass[0], counted_in_pass[1], counted_in_pass[2], counted_in_pass[3],
            counted_other);
    KRP_REQUIRE(passes_seen == 4, "4 passes");
    KRP_REQUIRE(counted_in_pass[0] == 0 && counted_in_pass[1] == 0,
                "a stop at pass 0 holds for passes 0 and 1");
    KRP_REQUIRE(counted_in_pass[2] == 1 && counted_in_pass[3] == 1,
                "a start at pass 2 holds for passes 2 and 3");
    KRP_REQUIRE(counted_other == 1, "the stop ends with the loop: the next kernel is counted");
}

KRP_CONFIGURE(tool_init, tool_fini)
