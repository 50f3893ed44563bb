// Readers pin snapshots and check their invariants while a writer loads and unloads plugins.
// Run under the tsan preset (label tsan): any race is a failure there.
#include "corpus.hpp"

#include <atomic>
#include <thread>
#include <vector>

using ferro::host::Runtime;
using namespace ferro::test;

TEST_CASE("concurrency: snapshot readers see consistent snapshots while plugins load and unload", "[loader][tsan]") {
    Runtime rt(isolated_options());
    REQUIRE_FALSE(rt.load_plugin(corpus_file("good_engine")).diagnostic);
    std::atomic<bool> stop{false};
    std::atomic<long> inconsistencies{0}, reads{0};

    auto reader = [&] {
        uint64_t last_epoch = 0;
        while (!stop.load()) {
            auto snap = rt.snapshot();
            // Epochs never go backwards for one observer.
            if (snap->epoch < last_epoch) ++inconsistencies;
            last_epoch = snap->epoch;
            // Every op belongs to a family present in the same snapshot, and every family's
            // modules refer to engines present in it.
            for (const auto& [name, op] : snap->ops) {
                auto family = snap->families.find(op.family_id);
                if (family == snap->families.end()) ++inconsistencies;
                else if (op.schema != &family->second.desc->ops[op.index]) ++inconsistencies;
            }
            for (const auto& [id, family] : snap->families) {
                for (const auto& [engine, slots] : family.modules) {
                    if (snap->find_engine(engine) == nullptr) ++inconsistencies;
                }
            }
            ++reads;
        }
    };
    std::vector<std::thread> readers;
    for (int i = 0; i < 3; ++i) readers.emplace_back(reader);
    // Reconfigure only while readers are reading, and until they have read plenty: on a
    // loaded machine the threads may otherwise barely overlap.
    while (reads.load() == 0) std::this_thread::yield();
    for (int round = 0; round < 40 || reads.load() < 1000; ++round) {
        REQUIRE_FALSE(rt.load_plugin(corpus_file("good_family")).diagnostic);
        rt.load_plugin(corpus_file("garbage"));  // a failure in the middle changes nothing
        rt.unload_plugin("fixture_good");
    }
    stop = true;
    for (auto& t : readers) t.join();
    CHECK(inconsistencies.load() == 0);
    CHECK(reads.load() > 0);
    CHECK(rt.snapshot()->find_plugin("fixture_good") == nullptr);
}
