#include "services/jobs/catalog.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace trainyard {
namespace {

using AT = AcceleratorType;

// gmock is not linked (CMake links GTest::gtest_main only), so a substring check by hand.
::testing::AssertionResult Contains(const std::string& text, std::string_view part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// The field of the single violation a catalog check reports ("" when it passed).
std::string FieldOf(const Status& s) {
  if (s.ok() || s.violations().empty()) return "";
  return s.violations().front().field;
}

const MachineType& Get(std::string_view name) {
  const MachineType* m = FindMachineType(name);
  EXPECT_NE(m, nullptr) << name;
  static const MachineType kMissing{"missing", 0, 0, AT::kUnspecified, 0, false, 0, "", 0};
  return m != nullptr ? *m : kMissing;
}

TEST(CatalogTest, FindsEveryRequiredMachineType) {
  const std::vector<std::string_view> required = {
      "a3-megagpu-8g",    "a3-highgpu-1g",     "a3-highgpu-2g",    "a3-highgpu-4g",
      "a3-highgpu-8g",    "a2-ultragpu-1g",    "a2-ultragpu-2g",   "a2-ultragpu-4g",
      "a2-ultragpu-8g",   "a2-highgpu-1g",     "a2-highgpu-2g",    "a2-highgpu-4g",
      "a2-highgpu-8g",    "a2-megagpu-16g",    "g2-standard-4",    "g2-standard-8",
      "g2-standard-12",   "g2-standard-16",    "g2-standard-24",   "g2-standard-32",
      "g2-standard-48",   "g2-standard-96",    "n1-standard-4",    "n1-standard-8",
      "n1-standard-16",   "n1-standard-32",    "n1-standard-64",   "n1-standard-96",
      "n1-highmem-4",     "n1-highmem-8",      "n1-highmem-16",    "n1-highmem-32",
      "n1-highmem-64",    "n1-highmem-96",     "n2-standard-4",    "n2-standard-8",
      "n2-standard-16",   "n2-standard-32",    "n2-standard-128",  "e2-standard-4",
      "e2-standard-8",    "e2-standard-16",    "e2-standard-32",   "ct5lp-hightpu-1t",
      "ct5lp-hightpu-4t", "ct5lp-hightpu-8t",  "ct5p-hightpu-4t",  "ct4p-hightpu-4t",
      "cloud-tpu",        "a4x-highgpu-4g",    "g4-standard-48",   "g4-standard-96",
      "g4-standard-192",  "g4-standard-384",   "ct6e-standard-1t", "ct6e-standard-4t",
      "ct6e-standard-8t", "tpu7x-standard-4t",
  };
  for (std::string_view name : required) {
    const MachineType* m = FindMachineType(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->name, name);
  }
}

TEST(CatalogTest, UnknownAndMiscasedNamesAreNotFound) {
  EXPECT_EQ(FindMachineType(""), nullptr);
  EXPECT_EQ(FindMachineType("a3-highgpu-16g"), nullptr);
  EXPECT_EQ(FindMachineType("A3-HIGHGPU-8G"), nullptr);
  EXPECT_EQ(FindMachineType("n1-standard-8 "), nullptr);
  EXPECT_EQ(FindMachineType("v5litepod-16"), nullptr);
}

TEST(CatalogTest, NamesAreUniqueAndAllFindable) {
  const std::vector<std::string_view> names = MachineTypeNames();
  EXPECT_GE(names.size(), 49u);
  std::set<std::string_view> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), names.size());
  for (std::string_view name : names) {
    const MachineType* m = FindMachineType(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->name, name);
  }
}

TEST(CatalogTest, EveryEntryIsInternallyConsistent) {
  for (std::string_view name : MachineTypeNames()) {
    const MachineType& m = Get(name);
    SCOPED_TRACE(std::string(name));
    EXPECT_GT(m.vcpus, 0);
    EXPECT_GT(m.memory_gb, 0);
    EXPECT_GT(m.network_gbps, 0);
    EXPECT_EQ(m.is_tpu, m.tpu_chips_per_host > 0);
    if (!m.is_tpu) {
      EXPECT_EQ(m.tpu_family, "");
      // Built-in GPUs name their type; CPU and N1 types carry none.
      EXPECT_EQ(m.accelerator_count > 0, m.accelerator != AT::kUnspecified);
    } else if (!m.tpu_family.empty()) {
      EXPECT_EQ(m.accelerator_count, m.tpu_chips_per_host);
      EXPECT_FALSE(TpuTopologies(m).empty());
    }
  }
}

TEST(CatalogTest, A3Figures) {
  const MachineType& mega = Get("a3-megagpu-8g");
  EXPECT_EQ(mega.vcpus, 208);
  EXPECT_EQ(mega.memory_gb, 1872);
  EXPECT_EQ(mega.accelerator, AT::kNvidiaH100Mega80gb);
  EXPECT_EQ(mega.accelerator_count, 8);
  EXPECT_FALSE(mega.is_tpu);

  struct Row {
    std::string_view name;
    int gpus, vcpus, memory_gb;
  };
  for (const Row& r : {Row{"a3-highgpu-1g", 1, 26, 234}, Row{"a3-highgpu-2g", 2, 52, 468},
                       Row{"a3-highgpu-4g", 4, 104, 936}, Row{"a3-highgpu-8g", 8, 208, 1872}}) {
    const MachineType& m = Get(r.name);
    EXPECT_EQ(m.accelerator, AT::kNvidiaH100_80gb) << r.name;
    EXPECT_EQ(m.accelerator_count, r.gpus) << r.name;
    EXPECT_EQ(m.vcpus, r.vcpus) << r.name;
    EXPECT_EQ(m.memory_gb, r.memory_gb) << r.name;
  }
}

TEST(CatalogTest, A2Figures) {
  for (std::string_view n :
       {"a2-ultragpu-1g", "a2-ultragpu-2g", "a2-ultragpu-4g", "a2-ultragpu-8g"}) {
    EXPECT_EQ(Get(n).accelerator, AT::kNvidiaA100_80gb) << n;
  }
  for (std::string_view n :
       {"a2-highgpu-1g", "a2-highgpu-2g", "a2-highgpu-4g", "a2-highgpu-8g", "a2-megagpu-16g"}) {
    EXPECT_EQ(Get(n).accelerator, AT::kNvidiaTeslaA100) << n;
  }
  EXPECT_EQ(Get("a2-ultragpu-8g").vcpus, 96);
  EXPECT_EQ(Get("a2-ultragpu-8g").memory_gb, 1360);
  EXPECT_EQ(Get("a2-ultragpu-8g").accelerator_count, 8);
  EXPECT_EQ(Get("a2-megagpu-16g").accelerator_count, 16);
  EXPECT_EQ(Get("a2-highgpu-1g").memory_gb, 85);
}

TEST(CatalogTest, G2CarriesL4InItsFixedCounts) {
  const std::vector<std::pair<std::string_view, int>> rows = {
      {"g2-standard-4", 1},  {"g2-standard-8", 1},  {"g2-standard-12", 1}, {"g2-standard-16", 1},
      {"g2-standard-24", 2}, {"g2-standard-32", 1}, {"g2-standard-48", 4}, {"g2-standard-96", 8}};
  for (const auto& [name, count] : rows) {
    const MachineType& m = Get(name);
    EXPECT_EQ(m.accelerator, AT::kNvidiaL4) << name;
    EXPECT_EQ(m.accelerator_count, count) << name;
  }
  EXPECT_EQ(Get("g2-standard-4").memory_gb, 16);
  EXPECT_EQ(Get("g2-standard-96").memory_gb, 384);
}

TEST(CatalogTest, A4xAndG4Figures) {
  const MachineType& a4x = Get("a4x-highgpu-4g");
  EXPECT_EQ(a4x.vcpus, 140);
  EXPECT_EQ(a4x.memory_gb, 884);
  EXPECT_EQ(a4x.accelerator, AT::kNvidiaGb200);
  EXPECT_EQ(a4x.accelerator_count, 4);
  EXPECT_EQ(a4x.network_gbps, 2000);
  // G4 scales 48 vCPU, 180 GB and one RTX PRO 6000 per step.
  const std::vector<std::pair<std::string_view, int>> g4 = {
      {"g4-standard-48", 1}, {"g4-standard-96", 2}, {"g4-standard-192", 4}, {"g4-standard-384", 8}};
  for (const auto& [name, gpus] : g4) {
    const MachineType& m = Get(name);
    EXPECT_EQ(m.accelerator, AT::kNvidiaRtxPro6000) << name;
    EXPECT_EQ(m.accelerator_count, gpus) << name;
    EXPECT_EQ(m.vcpus, 48 * gpus) << name;
    EXPECT_EQ(m.memory_gb, 180 * gpus) << name;
  }
}

TEST(CatalogTest, OnlyA4xSpansHosts) {
  EXPECT_EQ(MaxMultihostGpuNodes(Get("a4x-highgpu-4g")), 18);
  for (std::string_view name : MachineTypeNames()) {
    if (name != "a4x-highgpu-4g") {
      EXPECT_EQ(MaxMultihostGpuNodes(Get(name)), 0) << name;
    }
  }
}

TEST(CatalogTest, EveryGpuAndTpuHasAPeakRate) {
  // Every GPU a catalog machine carries (built in or attachable to N1) and every TPU family must
  // have a bf16 rate, or the workload model could not size a job on it.
  for (AT gpu : {AT::kNvidiaH100_80gb, AT::kNvidiaH100Mega80gb, AT::kNvidiaH200_141gb,
                 AT::kNvidiaB200, AT::kNvidiaGb200, AT::kNvidiaRtxPro6000, AT::kNvidiaTeslaA100,
                 AT::kNvidiaA100_80gb, AT::kNvidiaL4, AT::kNvidiaTeslaV100, AT::kNvidiaTeslaT4}) {
    EXPECT_TRUE(GpuPeakFlops(gpu, Precision::kBf16).has_value()) << AcceleratorName(gpu);
  }
  EXPECT_EQ(GpuPeakFlops(AT::kNvidiaGb200, Precision::kFp8), 5000e12);
  EXPECT_EQ(GpuPeakFlops(AT::kNvidiaRtxPro6000, Precision::kBf16), 500e12);
  for (std::string_view family : {"v2", "v3", "v4", "v5e", "v5p", "v6e", "7x"}) {
    EXPECT_TRUE(TpuPeakFlops(family, Precision::kBf16).has_value()) << family;
  }
  EXPECT_EQ(TpuPeakFlops("v6e", Precision::kBf16), 918e12);
  EXPECT_EQ(TpuPeakFlops("7x", Precision::kBf16), 2307e12);
  EXPECT_EQ(TpuPeakFlops("7x", Precision::kFp8), 4614e12);  // the first TPU with fp8 units
  EXPECT_FALSE(TpuPeakFlops("v6e", Precision::kFp8).has_value());
}

TEST(CatalogTest, CpuFamiliesCarryNoAccelerator) {
  for (std::string_view n :
       {"n1-standard-4", "n1-highmem-96", "n2-standard-128", "e2-standard-32"}) {
    const MachineType& m = Get(n);
    EXPECT_EQ(m.accelerator, AT::kUnspecified) << n;
    EXPECT_EQ(m.accelerator_count, 0) << n;
    EXPECT_FALSE(m.is_tpu) << n;
  }
  EXPECT_EQ(Get("n1-standard-8").memory_gb, 30);
  EXPECT_EQ(Get("n1-highmem-8").memory_gb, 52);
  EXPECT_EQ(Get("n2-standard-128").vcpus, 128);
}

TEST(CatalogTest, TpuHosts) {
  EXPECT_EQ(Get("ct5lp-hightpu-1t").tpu_chips_per_host, 1);
  EXPECT_EQ(Get("ct5lp-hightpu-4t").tpu_chips_per_host, 4);
  EXPECT_EQ(Get("ct5lp-hightpu-8t").tpu_chips_per_host, 8);
  EXPECT_EQ(Get("ct5lp-hightpu-4t").tpu_family, "v5e");
  EXPECT_EQ(Get("ct5p-hightpu-4t").tpu_family, "v5p");
  EXPECT_EQ(Get("ct5p-hightpu-4t").vcpus, 208);
  EXPECT_EQ(Get("ct5p-hightpu-4t").memory_gb, 448);
  EXPECT_EQ(Get("ct4p-hightpu-4t").tpu_family, "v4");
  EXPECT_EQ(Get("ct6e-standard-1t").tpu_chips_per_host, 1);
  EXPECT_EQ(Get("ct6e-standard-8t").tpu_chips_per_host, 8);
  EXPECT_EQ(Get("ct6e-standard-4t").tpu_family, "v6e");
  EXPECT_EQ(Get("ct6e-standard-4t").vcpus, 180);
  EXPECT_EQ(Get("ct6e-standard-4t").memory_gb, 720);
  EXPECT_EQ(Get("tpu7x-standard-4t").tpu_family, "7x");
  EXPECT_EQ(Get("tpu7x-standard-4t").vcpus, 224);
  EXPECT_EQ(Get("tpu7x-standard-4t").memory_gb, 960);
  EXPECT_TRUE(Get("cloud-tpu").is_tpu);
  EXPECT_EQ(Get("cloud-tpu").tpu_family, "");
}

// ---- Accelerator pairs ----

struct PairCase {
  std::string_view machine;
  AT type;
  int32_t count;
  std::string_view want_field;  // "" = accepted
};

class AcceleratorPairTest : public ::testing::TestWithParam<PairCase> {};

TEST_P(AcceleratorPairTest, Check) {
  const PairCase& c = GetParam();
  const Status s = CheckAccelerator(Get(c.machine), c.type, c.count);
  if (c.want_field.empty()) {
    EXPECT_TRUE(s.ok()) << s.message();
  } else {
    EXPECT_EQ(s.code(), Code::kInvalidArgument);
    ASSERT_EQ(s.violations().size(), 1u) << s.message();
    EXPECT_EQ(s.violations()[0].field, c.want_field) << s.message();
  }
}

constexpr std::string_view kOk = "";
constexpr std::string_view kType = "acceleratorType";
constexpr std::string_view kCount = "acceleratorCount";

INSTANTIATE_TEST_SUITE_P(
    Catalog, AcceleratorPairTest,
    ::testing::Values(
        // Built-in GPUs: exactly their own type and count, both spelled out.
        PairCase{"a3-megagpu-8g", AT::kNvidiaH100Mega80gb, 8, kOk},
        PairCase{"a3-megagpu-8g", AT::kNvidiaH100_80gb, 8, kType},
        PairCase{"a3-highgpu-8g", AT::kNvidiaH100_80gb, 8, kOk},
        PairCase{"a3-highgpu-8g", AT::kNvidiaH100_80gb, 4, kCount},
        PairCase{"a3-highgpu-8g", AT::kUnspecified, 0, kType},
        PairCase{"a3-highgpu-8g", AT::kUnspecified, 8, kType},
        PairCase{"a3-highgpu-1g", AT::kNvidiaH100_80gb, 1, kOk},
        PairCase{"a3-highgpu-4g", AT::kNvidiaH100_80gb, 8, kCount},
        PairCase{"a2-ultragpu-8g", AT::kNvidiaA100_80gb, 8, kOk},
        PairCase{"a2-ultragpu-8g", AT::kNvidiaTeslaA100, 8, kType},
        PairCase{"a2-highgpu-2g", AT::kNvidiaTeslaA100, 2, kOk},
        PairCase{"a2-megagpu-16g", AT::kNvidiaTeslaA100, 16, kOk},
        PairCase{"a2-megagpu-16g", AT::kNvidiaTeslaA100, 8, kCount},
        PairCase{"g2-standard-24", AT::kNvidiaL4, 2, kOk},
        PairCase{"g2-standard-24", AT::kNvidiaL4, 1, kCount},
        PairCase{"g2-standard-4", AT::kNvidiaTeslaT4, 1, kType},
        PairCase{"g2-standard-4", AT::kUnspecified, 0, kType},
        PairCase{"a4x-highgpu-4g", AT::kNvidiaGb200, 4, kOk},
        PairCase{"a4x-highgpu-4g", AT::kNvidiaB200, 4, kType},
        PairCase{"a4x-highgpu-4g", AT::kNvidiaGb200, 8, kCount},
        PairCase{"g4-standard-48", AT::kNvidiaRtxPro6000, 1, kOk},
        PairCase{"g4-standard-96", AT::kNvidiaRtxPro6000, 2, kOk},
        PairCase{"g4-standard-192", AT::kNvidiaRtxPro6000, 4, kOk},
        PairCase{"g4-standard-384", AT::kNvidiaRtxPro6000, 8, kOk},
        PairCase{"g4-standard-384", AT::kNvidiaRtxPro6000, 4, kCount},
        PairCase{"g4-standard-48", AT::kNvidiaL4, 1, kType},
        // N1: optional attachable GPUs, counts bounded by the VM's vCPUs.
        PairCase{"n1-standard-8", AT::kUnspecified, 0, kOk},
        PairCase{"n1-standard-8", AT::kNvidiaTeslaT4, 1, kOk},
        PairCase{"n1-standard-8", AT::kNvidiaTeslaT4, 2, kOk},
        PairCase{"n1-standard-8", AT::kNvidiaTeslaT4, 4, kOk},
        PairCase{"n1-standard-8", AT::kNvidiaTeslaT4, 3, kCount},
        PairCase{"n1-standard-8", AT::kNvidiaTeslaT4, 8, kCount},
        PairCase{"n1-standard-8", AT::kNvidiaTeslaT4, 0, kCount},
        PairCase{"n1-standard-8", AT::kNvidiaTeslaV100, 8, kOk},
        PairCase{"n1-standard-8", AT::kNvidiaTeslaP100, 4, kOk},
        PairCase{"n1-standard-8", AT::kNvidiaTeslaP4, 2, kOk},
        PairCase{"n1-standard-8", AT::kNvidiaTeslaP4, 8, kCount},
        PairCase{"n1-standard-8", AT::kNvidiaL4, 1, kType},
        PairCase{"n1-standard-8", AT::kNvidiaTeslaK80, 1, kType},
        PairCase{"n1-standard-8", AT::kUnspecified, 1, kCount},
        PairCase{"n1-standard-16", AT::kNvidiaTeslaV100, 1, kCount},  // 1 V100: ≤12 vCPUs
        PairCase{"n1-standard-16", AT::kNvidiaTeslaV100, 2, kOk},
        PairCase{"n1-standard-64", AT::kNvidiaTeslaT4, 2, kCount},  // 2 T4: ≤48 vCPUs
        PairCase{"n1-standard-96", AT::kNvidiaTeslaT4, 4, kOk},
        PairCase{"n1-standard-96", AT::kNvidiaTeslaV100, 8, kOk},
        PairCase{"n1-highmem-16", AT::kNvidiaTeslaP100, 1, kOk},
        PairCase{"n1-highmem-32", AT::kNvidiaTeslaP100, 1, kCount},
        // CPU-only families.
        PairCase{"n2-standard-8", AT::kUnspecified, 0, kOk},
        PairCase{"n2-standard-8", AT::kNvidiaTeslaT4, 1, kType},
        PairCase{"n2-standard-8", AT::kUnspecified, 1, kCount},
        PairCase{"e2-standard-4", AT::kUnspecified, 0, kOk},
        PairCase{"e2-standard-4", AT::kNvidiaL4, 1, kType},
        // TPU hosts: no type (or their own TPU enum), count 0 or chips per host.
        PairCase{"ct5lp-hightpu-4t", AT::kUnspecified, 0, kOk},
        PairCase{"ct5lp-hightpu-4t", AT::kUnspecified, 4, kOk},
        PairCase{"ct5lp-hightpu-4t", AT::kTpuV5Litepod, 4, kOk},
        PairCase{"ct5lp-hightpu-4t", AT::kUnspecified, 16, kCount},
        PairCase{"ct5lp-hightpu-4t", AT::kTpuV4Pod, 4, kType},
        PairCase{"ct5lp-hightpu-4t", AT::kNvidiaL4, 1, kType},
        PairCase{"ct5lp-hightpu-1t", AT::kUnspecified, 1, kOk},
        PairCase{"ct5lp-hightpu-8t", AT::kTpuV5Litepod, 8, kOk},
        PairCase{"ct5lp-hightpu-8t", AT::kUnspecified, 4, kCount},
        PairCase{"ct5p-hightpu-4t", AT::kUnspecified, 4, kOk},
        PairCase{"ct5p-hightpu-4t", AT::kTpuV5Litepod, 4, kType},
        PairCase{"ct4p-hightpu-4t", AT::kTpuV4Pod, 4, kOk},
        PairCase{"ct4p-hightpu-4t", AT::kUnspecified, 0, kOk},
        // v6e and 7x have no TPU enum value at all.
        PairCase{"ct6e-standard-4t", AT::kUnspecified, 4, kOk},
        PairCase{"ct6e-standard-8t", AT::kUnspecified, 0, kOk},
        PairCase{"ct6e-standard-4t", AT::kTpuV5Litepod, 4, kType},
        PairCase{"ct6e-standard-1t", AT::kUnspecified, 4, kCount},
        PairCase{"tpu7x-standard-4t", AT::kUnspecified, 4, kOk},
        PairCase{"tpu7x-standard-4t", AT::kTpuV4Pod, 4, kType},
        // Legacy cloud-tpu: TPU_V2/TPU_V3 with 8 or a multiple of 32 (up to the pod).
        PairCase{"cloud-tpu", AT::kTpuV2, 8, kOk}, PairCase{"cloud-tpu", AT::kTpuV3, 8, kOk},
        PairCase{"cloud-tpu", AT::kTpuV2, 32, kOk}, PairCase{"cloud-tpu", AT::kTpuV2, 512, kOk},
        PairCase{"cloud-tpu", AT::kTpuV2, 1024, kCount},
        PairCase{"cloud-tpu", AT::kTpuV3, 2048, kOk},
        PairCase{"cloud-tpu", AT::kTpuV3, 4096, kCount},
        PairCase{"cloud-tpu", AT::kTpuV3, 16, kCount}, PairCase{"cloud-tpu", AT::kTpuV3, 0, kCount},
        PairCase{"cloud-tpu", AT::kUnspecified, 8, kType},
        PairCase{"cloud-tpu", AT::kTpuV5Litepod, 8, kType}));

TEST(CatalogTest, BuiltInGpuErrorNamesTheOnlyCombination) {
  const Status s = CheckAccelerator(Get("a3-highgpu-8g"), AT::kNvidiaL4, 8);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.violations()[0].description,
                       "a3-highgpu-8g takes acceleratorType NVIDIA_H100_80GB with "
                       "acceleratorCount 8"));
  EXPECT_TRUE(Contains(s.violations()[0].description, "NVIDIA_L4"));
}

TEST(CatalogTest, N1ErrorListsAttachableCombinations) {
  const Status s = CheckAccelerator(Get("n1-standard-8"), AT::kNvidiaTeslaT4, 3);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.violations()[0].description,
                       "n1-standard-8 takes NVIDIA_TESLA_T4 with 1, 2 or 4, NVIDIA_TESLA_V100 "
                       "with 1, 2, 4 or 8, NVIDIA_TESLA_P100 with 1, 2 or 4, NVIDIA_TESLA_P4 "
                       "with 1, 2 or 4"));
  // The list follows the VM's size: a 16-vCPU VM cannot take a single V100.
  const Status big = CheckAccelerator(Get("n1-standard-16"), AT::kNvidiaTeslaV100, 1);
  ASSERT_FALSE(big.ok());
  EXPECT_TRUE(Contains(big.violations()[0].description, "NVIDIA_TESLA_V100 with 2, 4 or 8"));
}

TEST(CatalogTest, CpuAndTpuErrorsExplainTheRule) {
  const Status cpu = CheckAccelerator(Get("n2-standard-8"), AT::kNvidiaTeslaT4, 1);
  EXPECT_TRUE(Contains(cpu.message(), "n2-standard-8 takes no accelerators"));
  const Status tpu = CheckAccelerator(Get("ct5lp-hightpu-4t"), AT::kUnspecified, 16);
  EXPECT_TRUE(Contains(tpu.message(),
                       "ct5lp-hightpu-4t takes no acceleratorType (or "
                       "TPU_V5_LITEPOD) and acceleratorCount 0 or 4"));
  const Status legacy = CheckAccelerator(Get("cloud-tpu"), AT::kTpuV2, 16);
  EXPECT_TRUE(Contains(legacy.message(), "TPU_V2 or TPU_V3 with acceleratorCount 8"));
}

// ---- TPU topologies ----

struct TopologyCase {
  std::string_view machine;
  std::string_view topology;
  int chips;
  int hosts;
};

// Every entry of the catalog's topology table, with the chips and hosts it must resolve to.
const std::vector<TopologyCase>& AllTopologies() {
  static const std::vector<TopologyCase> kAll = {
      {"ct5lp-hightpu-1t", "1x1", 1, 1},
      {"ct5lp-hightpu-4t", "2x2", 4, 1},
      {"ct5lp-hightpu-4t", "4x4", 16, 4},
      {"ct5lp-hightpu-4t", "4x8", 32, 8},
      {"ct5lp-hightpu-4t", "8x8", 64, 16},
      {"ct5lp-hightpu-4t", "8x16", 128, 32},
      {"ct5lp-hightpu-4t", "16x16", 256, 64},
      {"ct5lp-hightpu-8t", "2x4", 8, 1},
      {"ct5p-hightpu-4t", "2x2x1", 4, 1},
      {"ct5p-hightpu-4t", "2x2x2", 8, 2},
      {"ct5p-hightpu-4t", "2x4x4", 32, 8},
      {"ct5p-hightpu-4t", "4x4x4", 64, 16},
      {"ct5p-hightpu-4t", "4x4x8", 128, 32},
      {"ct5p-hightpu-4t", "4x8x8", 256, 64},
      {"ct5p-hightpu-4t", "8x8x8", 512, 128},
      {"ct5p-hightpu-4t", "8x8x16", 1024, 256},
      {"ct5p-hightpu-4t", "8x16x16", 2048, 512},
      {"ct5p-hightpu-4t", "16x16x16", 4096, 1024},
      {"ct5p-hightpu-4t", "16x16x24", 6144, 1536},
      {"ct4p-hightpu-4t", "2x2x1", 4, 1},
      {"ct4p-hightpu-4t", "2x2x2", 8, 2},
      {"ct4p-hightpu-4t", "2x2x4", 16, 4},
      {"ct4p-hightpu-4t", "2x4x4", 32, 8},
      {"ct4p-hightpu-4t", "4x4x4", 64, 16},
      {"ct4p-hightpu-4t", "4x4x8", 128, 32},
      {"ct4p-hightpu-4t", "4x8x8", 256, 64},
      {"ct4p-hightpu-4t", "8x8x8", 512, 128},
      {"ct4p-hightpu-4t", "8x8x16", 1024, 256},
      {"ct4p-hightpu-4t", "8x16x16", 2048, 512},
      {"ct4p-hightpu-4t", "16x16x16", 4096, 1024},
      // v6e: v5e's 2D shapes; 2x4 also from two 4-chip hosts.
      {"ct6e-standard-1t", "1x1", 1, 1},
      {"ct6e-standard-4t", "2x2", 4, 1},
      {"ct6e-standard-4t", "2x4", 8, 2},
      {"ct6e-standard-4t", "4x4", 16, 4},
      {"ct6e-standard-4t", "4x8", 32, 8},
      {"ct6e-standard-4t", "8x8", 64, 16},
      {"ct6e-standard-4t", "8x16", 128, 32},
      {"ct6e-standard-4t", "16x16", 256, 64},
      {"ct6e-standard-8t", "2x4", 8, 1},
      // TPU7x: 3D torus of 4-chip hosts, up to the 9,216-chip pod.
      {"tpu7x-standard-4t", "2x2x1", 4, 1},
      {"tpu7x-standard-4t", "2x2x2", 8, 2},
      {"tpu7x-standard-4t", "2x2x4", 16, 4},
      {"tpu7x-standard-4t", "2x4x4", 32, 8},
      {"tpu7x-standard-4t", "4x4x4", 64, 16},
      {"tpu7x-standard-4t", "4x4x8", 128, 32},
      {"tpu7x-standard-4t", "4x8x8", 256, 64},
      {"tpu7x-standard-4t", "8x8x8", 512, 128},
      {"tpu7x-standard-4t", "8x8x16", 1024, 256},
      {"tpu7x-standard-4t", "8x16x16", 2048, 512},
      {"tpu7x-standard-4t", "16x16x16", 4096, 1024},
      {"tpu7x-standard-4t", "16x16x24", 6144, 1536},
      {"tpu7x-standard-4t", "16x24x24", 9216, 2304},
  };
  return kAll;
}

// Product of the dimensions of "AxB" / "AxBxC".
int ChipsOf(std::string_view topology) {
  int product = 1, dim = 0;
  for (char c : topology) {
    if (c == 'x') {
      product *= dim;
      dim = 0;
    } else {
      dim = dim * 10 + (c - '0');
    }
  }
  return product * dim;
}

class TpuTopologyTest : public ::testing::TestWithParam<TopologyCase> {};

TEST_P(TpuTopologyTest, Resolves) {
  const TopologyCase& c = GetParam();
  EXPECT_EQ(ChipsOf(c.topology), c.chips);
  StatusOr<TpuSlice> slice = ResolveTpuTopology(Get(c.machine), c.topology);
  ASSERT_TRUE(slice.ok()) << slice.status().message();
  EXPECT_EQ(slice->chips, c.chips);
  EXPECT_EQ(slice->hosts, c.hosts);
}

INSTANTIATE_TEST_SUITE_P(Catalog, TpuTopologyTest, ::testing::ValuesIn(AllTopologies()));

TEST(CatalogTest, TopologyListsMatchTheTable) {
  for (std::string_view name : MachineTypeNames()) {
    std::vector<std::string_view> want;
    for (const TopologyCase& c : AllTopologies()) {
      if (c.machine == name) want.push_back(c.topology);
    }
    EXPECT_EQ(TpuTopologies(Get(name)), want) << name;
  }
}

TEST(CatalogTest, EmptyTopologyMeansOneHost) {
  const std::vector<std::pair<std::string_view, int>> rows = {
      {"ct5lp-hightpu-1t", 1}, {"ct5lp-hightpu-4t", 4}, {"ct5lp-hightpu-8t", 8},
      {"ct5p-hightpu-4t", 4},  {"ct4p-hightpu-4t", 4},  {"ct6e-standard-1t", 1},
      {"ct6e-standard-4t", 4}, {"ct6e-standard-8t", 8}, {"tpu7x-standard-4t", 4}};
  for (const auto& [name, chips] : rows) {
    StatusOr<TpuSlice> slice = ResolveTpuTopology(Get(name), "");
    ASSERT_TRUE(slice.ok()) << name;
    EXPECT_EQ(slice->chips, chips) << name;
    EXPECT_EQ(slice->hosts, 1) << name;
  }
}

TEST(CatalogTest, V5eHostSizesLimitTheShapes) {
  // A 1-chip host only forms 1x1, an 8-chip host only 2x4, and 4-chip hosts never form 2x4.
  for (std::string_view t : {"2x2", "2x4", "4x4"}) {
    EXPECT_EQ(FieldOf(ResolveTpuTopology(Get("ct5lp-hightpu-1t"), t).status()), "tpuTopology");
  }
  for (std::string_view t : {"1x1", "2x2", "4x4", "16x16"}) {
    EXPECT_EQ(FieldOf(ResolveTpuTopology(Get("ct5lp-hightpu-8t"), t).status()), "tpuTopology");
  }
  for (std::string_view t : {"1x1", "2x4"}) {
    EXPECT_EQ(FieldOf(ResolveTpuTopology(Get("ct5lp-hightpu-4t"), t).status()), "tpuTopology");
  }
}

TEST(CatalogTest, MalformedOrForeignTopologiesAreRejected) {
  for (std::string_view t : {"2x2x1", "4X4", " 4x4", "4x4 ", "3x3", "32x32", "x", "16"}) {
    EXPECT_EQ(FieldOf(ResolveTpuTopology(Get("ct5lp-hightpu-4t"), t).status()), "tpuTopology") << t;
  }
  for (std::string_view t : {"2x2", "1x2x2", "2x2x4", "32x32x32"}) {
    EXPECT_EQ(FieldOf(ResolveTpuTopology(Get("ct5p-hightpu-4t"), t).status()), "tpuTopology") << t;
  }
  EXPECT_EQ(FieldOf(ResolveTpuTopology(Get("ct4p-hightpu-4t"), "16x16x24").status()),
            "tpuTopology");
}

TEST(CatalogTest, TopologyErrorListsValidShapes) {
  StatusOr<TpuSlice> slice = ResolveTpuTopology(Get("ct5lp-hightpu-4t"), "3x3");
  ASSERT_FALSE(slice.ok());
  EXPECT_EQ(slice.status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(slice.status().violations()[0].description,
                       "ct5lp-hightpu-4t takes tpuTopology 2x2, 4x4, 4x8, 8x8, 8x16 or 16x16"));
}

TEST(CatalogTest, TopologyOnNonTpuTypesIsAnError) {
  for (std::string_view name : {"a3-highgpu-8g", "n1-standard-4", "cloud-tpu"}) {
    StatusOr<TpuSlice> slice = ResolveTpuTopology(Get(name), "2x2");
    EXPECT_EQ(FieldOf(slice.status()), "tpuTopology") << name;
    EXPECT_TRUE(TpuTopologies(Get(name)).empty()) << name;
  }
  EXPECT_FALSE(ResolveTpuTopology(Get("n1-standard-4"), "").ok());
}

}  // namespace
TEST(CatalogTest, AcceleratorsHeldCountEachNodesGpusOrTpuChips) {
  PlacedPoolStatus a3;
  a3.machine_type = "a3-megagpu-8g";
  a3.nodes = {"n0", "n1"};
  PlacedPoolStatus v5e;
  v5e.machine_type = "ct5lp-hightpu-4t";
  v5e.nodes = {"h0", "h1", "h2", "h3"};
  PlacedPoolStatus cpu;
  cpu.machine_type = "n2-standard-8";
  cpu.nodes = {"c0"};
  EXPECT_EQ(AcceleratorsHeld({a3, v5e, cpu}), 16 + 16);

  SchedulingStatus s;
  s.pools = {a3};
  s.cost_usd = 32;
  EXPECT_FALSE(CostPerProductiveAcceleratorHour(s)) << "nothing productive yet";
  s.goodput.running = std::chrono::hours(1);
  EXPECT_DOUBLE_EQ(*CostPerProductiveAcceleratorHour(s), 2.0) << "$32 over 16 GPU-hours";
}

}  // namespace trainyard
