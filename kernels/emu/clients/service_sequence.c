/* A tool that, like AMD's service-sequence kernel-replay sample, sets up every service it wants
 * in its initialize and gives up cleanly when one is not available: buffers, a callback thread,
 * the agent list and dispatch counting must work; PC sampling, thread trace and SPM are asked
 * for and, when refused with an error status, reported ("<service> unavailable (<status>)") and
 * skipped. Initialize then returns -1 and finalize prints SKIPPED, as the sample does on an SDK
 * without those services. Anything that should work and does not aborts. */
#define KRP_CLIENT "service-sequence"
#include "krp_client.h"

typedef struct { uint64_t handle; } rocprofiler_buffer_id_t;
typedef struct { uint64_t handle; } rocprofiler_callback_thread_t;
typedef void (*krp_buffer_cb_t)(rocprofiler_context_id_t, rocprofiler_buffer_id_t, void**, size_t,
                                void*, uint64_t);
typedef rocprofiler_status_t (*krp_agents_cb_t)(uint32_t, const void**, size_t, void*);

/* The leading fields of rocprofiler_agent_v0_t this client reads. */
typedef struct {
    uint64_t size;
    rocprofiler_agent_id_t id;
    uint32_t type;
} krp_agent_head_t;
enum { KRP_AGENT_TYPE_CPU = 1, KRP_AGENT_TYPE_GPU = 2, KRP_AGENT_INFO_VERSION_0 = 1 };
enum { KRP_BUFFER_POLICY_LOSSLESS = 2 };

rocprofiler_status_t rocprofiler_create_buffer(rocprofiler_context_id_t, size_t, size_t, uint32_t,
                                               krp_buffer_cb_t, void*, rocprofiler_buffer_id_t*);
rocprofiler_status_t rocprofiler_flush_buffer(rocprofiler_buffer_id_t);
rocprofiler_status_t rocprofiler_destroy_buffer(rocprofiler_buffer_id_t);
rocprofiler_status_t rocprofiler_create_callback_thread(rocprofiler_callback_thread_t*);
rocprofiler_status_t rocprofiler_assign_callback_thread(rocprofiler_buffer_id_t,
                                                        rocprofiler_callback_thread_t);
rocprofiler_status_t rocprofiler_query_available_agents(uint32_t, krp_agents_cb_t, size_t, void*);
rocprofiler_status_t rocprofiler_query_pc_sampling_agent_configurations(
    rocprofiler_agent_id_t, rocprofiler_status_t (*)(const void*, size_t, void*), void*);
rocprofiler_status_t rocprofiler_configure_dispatch_thread_trace_service(
    rocprofiler_context_id_t, rocprofiler_agent_id_t, void*, size_t, void*, void*, void*);
rocprofiler_status_t rocprofiler_spm_configure_callback_dispatch_service(
    rocprofiler_context_id_t, void*, void*, void*, void*);

static rocprofiler_agent_id_t g_gpus[8];
static size_t g_num_gpus = 0;
static rocprofiler_buffer_id_t g_buffer = {0};
static int g_refused = 0;
static int g_initialized = 0;

static void buffer_cb(rocprofiler_context_id_t c, rocprofiler_buffer_id_t b, void** h, size_t n,
                      void* d, uint64_t drops) {
    (void) c; (void) b; (void) h; (void) n; (void) d; (void) drops;
}

/* A newer header's agent struct is longer than the SDK may fill: pass a larger size on purpose
 * and check the SDK says in `size` how much it filled. */
#define KRP_AGENT_SIZE 512

static rocprofiler_status_t agents_cb(uint32_t version, const void** agents, size_t n, void* d) {
    (void) d;
    KRP_REQUIRE(version == KRP_AGENT_INFO_VERSION_0, "agent info version 0");
    KRP_REQUIRE(n >= 2, "a CPU and at least one GPU agent");
    for(size_t i = 0; i < n; ++i) {
        const krp_agent_head_t* a = (const krp_agent_head_t*) agents[i];
        KRP_REQUIRE(a->size > sizeof(krp_agent_head_t) && a->size <= KRP_AGENT_SIZE,
                    "agent size says how much was filled");
        if(a->type == KRP_AGENT_TYPE_GPU && g_num_gpus < 8) g_gpus[g_num_gpus++] = a->id;
        KRP_REQUIRE(a->type == KRP_AGENT_TYPE_CPU || a->type == KRP_AGENT_TYPE_GPU, "agent type");
    }
    return 0;
}

static rocprofiler_status_t no_counters(rocprofiler_agent_id_t a, rocprofiler_counter_id_t* c,
                                        size_t n, void* d) {
    (void) a; (void) c; (void) d;
    KRP_REQUIRE(n > 0, "a GPU agent from the agent list has counters");
    return 0;
}

static rocprofiler_status_t pcs_configs(const void* c, size_t n, void* d) {
    (void) c; (void) n; (void) d;
    return 0;
}

/* Reports a refused service and goes on, as the sample does. */
static void refused(const char* service, rocprofiler_status_t s) {
    KRP_REQUIRE(s != 0, "the service was refused");
    const char* name = rocprofiler_get_status_name(s);
    KRP_REQUIRE(name != NULL, "a refusal has a status name");
    fprintf(stderr, "[service-sequence] %s unavailable (%s)\n", service, name);
    ++g_refused;
}

static void setup_buffer(void) {
    rocprofiler_context_id_t ctx = {0};
    KRP_CHECK(rocprofiler_create_context(&ctx));
    KRP_CHECK(rocprofiler_create_buffer(ctx, 8192, 2048, KRP_BUFFER_POLICY_LOSSLESS, buffer_cb,
                                        NULL, &g_buffer));
    KRP_REQUIRE(g_buffer.handle != 0, "a buffer id");
    rocprofiler_callback_thread_t thread = {0};
    KRP_CHECK(rocprofiler_create_callback_thread(&thread));
    KRP_CHECK(rocprofiler_assign_callback_thread(g_buffer, thread));
    rocprofiler_callback_thread_t bogus = {thread.handle + 1000};
    KRP_REQUIRE(rocprofiler_assign_callback_thread(g_buffer, bogus) == 6,
                "an unknown thread is THREAD_NOT_FOUND");
}

static int init(rocprofiler_client_finalize_t fini, void* data) {
    (void) fini; (void) data;
    setup_buffer();
    KRP_CHECK(rocprofiler_query_available_agents(KRP_AGENT_INFO_VERSION_0, agents_cb,
                                                 KRP_AGENT_SIZE, NULL));
    KRP_REQUIRE(g_num_gpus > 0, "at least one GPU agent");
    KRP_CHECK(rocprofiler_iterate_agent_supported_counters(g_gpus[0], no_counters, NULL));

    rocprofiler_context_id_t ctx = {0};
    KRP_CHECK(rocprofiler_create_context(&ctx));
    refused("PC sampling",
            rocprofiler_query_pc_sampling_agent_configurations(g_gpus[0], pcs_configs, NULL));
    refused("ATT", rocprofiler_configure_dispatch_thread_trace_service(ctx, g_gpus[0], NULL, 0,
                                                                        NULL, NULL, NULL));
    refused("SPM", rocprofiler_spm_configure_callback_dispatch_service(ctx, NULL, NULL, NULL,
                                                                        NULL));
    if(g_refused > 0) return -1;
    g_initialized = 1;
    return 0;
}

static void fini(void* data) {
    (void) data;
    KRP_CHECK(rocprofiler_flush_buffer(g_buffer));
    KRP_CHECK(rocprofiler_destroy_buffer(g_buffer));
    KRP_REQUIRE(rocprofiler_flush_buffer(g_buffer) == 3, "a destroyed buffer is BUFFER_NOT_FOUND");
    if(!g_initialized) {
        fprintf(stderr, "[service-sequence] SKIPPED: %d services unavailable\n", g_refused);
        return;
    }
    fprintf(stderr, "[service-sequence] all services available\n");
}

KRP_CONFIGURE(init, fini)
