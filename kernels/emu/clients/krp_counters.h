/* Counter configs by name and the checks of the counting record callback, shared by the
 * counters and early-exit clients. Pass p of the replayed kernel counts KRP_PASS_COUNTER[p]
 * (picked from the pass index saved at PASS ENTER); the opted-out kernel counts SQ_WAVES once.
 * The expected values follow the emulator's documented model: SQ_WAVES = work-groups x
 * ceil(work-group size / 64); GRBM_GUI_ACTIVE = 1000 + 4 x work-items; GRBM_COUNT = that + 100. */
#ifndef KRP_COUNTERS_H
#define KRP_COUNTERS_H

#include "krp_client.h"
#include <string.h>

static const char* const KRP_PASS_COUNTER[3] = {"SQ_WAVES", "GRBM_COUNT", "GRBM_GUI_ACTIVE"};
/* bump<<<1, 67>>>: 67 work-items in one group of 67 -> 2 waves. */
static const double KRP_PASS_VALUE[3] = {2.0, 1000.0 + 4 * 67 + 100, 1000.0 + 4 * 67};

static _Thread_local uint64_t krp_tl_pass = 0;
static int krp_records_replayed = 0;
static int krp_records_opted_out = 0;
static uint64_t krp_counter_of[4] = {0, 0, 0, 0};
static uint64_t krp_config_of[4] = {0, 0, 0, 0};

static rocprofiler_status_t krp_collect(rocprofiler_agent_id_t agent, rocprofiler_counter_id_t* ids,
                                        size_t n, void* data) {
    (void) agent;
    rocprofiler_counter_id_t* want = (rocprofiler_counter_id_t*) data;
    for(size_t i = 0; i < n; ++i) {
        rocprofiler_counter_info_v0_t info;
        memset(&info, 0, sizeof info);
        KRP_CHECK(rocprofiler_query_counter_info(ids[i], KRP_COUNTER_INFO_VERSION_0, &info));
        KRP_REQUIRE(info.id.handle == ids[i].handle, "counter info names its own id");
        for(int k = 0; k < 3; ++k)
            if(info.name && strcmp(info.name, KRP_PASS_COUNTER[k]) == 0) want[k] = ids[i];
    }
    return 0;
}

/* The config of slot k (0-2: the pass counters; 3 the opted-out kernel's SQ_WAVES), made on
 * first use; the counting callbacks of one window run on one thread at a time. */
static rocprofiler_counter_config_id_t krp_config(rocprofiler_agent_id_t agent, int k) {
    if(krp_config_of[k] == 0) {
        rocprofiler_counter_id_t want[3];
        memset(want, 0, sizeof want);
        KRP_CHECK(rocprofiler_iterate_agent_supported_counters(agent, krp_collect, want));
        rocprofiler_counter_id_t id = want[k == 3 ? 0 : k];
        KRP_REQUIRE(id.handle != 0, "the agent supports SQ_WAVES, GRBM_COUNT and GRBM_GUI_ACTIVE");
        rocprofiler_counter_config_id_t cfg = {0};
        KRP_CHECK(rocprofiler_create_counter_config(agent, &id, 1, &cfg));
        KRP_REQUIRE(cfg.handle != 0, "a config handle");
        krp_counter_of[k] = id.handle;
        krp_config_of[k] = cfg.handle;
    }
    rocprofiler_counter_config_id_t c = {krp_config_of[k]};
    return c;
}

static void krp_dispatch_cb(rocprofiler_dispatch_counting_service_data_t d,
                            rocprofiler_counter_config_id_t* config, rocprofiler_user_data_t* ud,
                            void* data) {
    (void) data;
    KRP_REQUIRE(d.size >= sizeof d, "counting service data size");
    uint32_t block = d.dispatch_info.workgroup_size.x;
    if(block == KRP_REPLAY_BLOCK) {
        KRP_REQUIRE(krp_tl_pass < 3, "the pass index saved at PASS ENTER is in range");
        *config = krp_config(d.dispatch_info.agent_id, (int) krp_tl_pass);
        ud->value = krp_tl_pass + 1;
    } else if(block == KRP_OPT_OUT_BLOCK) {
        *config = krp_config(d.dispatch_info.agent_id, 3);
        ud->value = 100;
    }
}

static void krp_record_cb(rocprofiler_dispatch_counting_service_data_t d,
                          rocprofiler_counter_record_t* records, size_t n,
                          rocprofiler_user_data_t ud, void* data) {
    (void) data;
    KRP_REQUIRE(n == 1, "one record: one counter per config, no dimensions");
    KRP_REQUIRE(records[0].dispatch_id == d.dispatch_info.dispatch_id, "record's dispatch id");
    KRP_REQUIRE(records[0].user_data.value == ud.value, "record carries the dispatch's user data");
    KRP_REQUIRE(d.end_timestamp >= d.start_timestamp && d.start_timestamp > 0, "GPU times");
    rocprofiler_counter_id_t cid = {0};
    KRP_CHECK(rocprofiler_query_record_counter_id(records[0].id, &cid));
    uint32_t block = d.dispatch_info.workgroup_size.x;
    if(block == KRP_REPLAY_BLOCK) {
        uint64_t pass = ud.value - 1;
        KRP_REQUIRE((int) pass == krp_records_replayed, "one record per pass, in pass order");
        KRP_REQUIRE(cid.handle == krp_counter_of[pass], "the counter chosen for this pass");
        KRP_REQUIRE(records[0].counter_value == KRP_PASS_VALUE[pass], "the model's value");
        fprintf(stderr, "[%s] pass %lu %s=%.0f\n", KRP_CLIENT, (unsigned long) pass,
                KRP_PASS_COUNTER[pass], records[0].counter_value);
        ++krp_records_replayed;
    } else if(block == KRP_OPT_OUT_BLOCK) {
        KRP_REQUIRE(ud.value == 100, "opted-out dispatch's user data");
        KRP_REQUIRE(cid.handle == krp_counter_of[3], "SQ_WAVES for the opted-out kernel");
        KRP_REQUIRE(records[0].counter_value == 1.0, "64 work-items: one wave");
        ++krp_records_opted_out;
    }
}

static void krp_counting_service(void) {
    rocprofiler_context_id_t ctx = {0};
    KRP_CHECK(rocprofiler_create_context(&ctx));
    KRP_CHECK(rocprofiler_configure_callback_dispatch_counting_service(ctx, krp_dispatch_cb, NULL,
                                                                       krp_record_cb, NULL));
    KRP_CHECK(rocprofiler_start_context(ctx));
}

#endif
