#include "services/cost/price.h"

namespace trainyard::cost {
namespace {

using AT = AcceleratorType;

}  // namespace

// The figures are docs/capacity-model.md's table ("Prices"), us-central1 on-demand.
double GpuHourPrice(AcceleratorType type) {
  switch (type) {
    case AT::kNvidiaH100Mega80gb:
      return 11.5;
    case AT::kNvidiaH100_80gb:
      return 11.06;
    case AT::kNvidiaH200_141gb:
      return 13.0;
    case AT::kNvidiaB200:
      return 15.0;
    case AT::kNvidiaGb200:
      // No public list price for a4x-highgpu-4g (sold through reservations); our planning value
      // sits just above B200 for the larger NVLink domain and the Grace host.
      return 16.0;
    case AT::kNvidiaRtxPro6000:
      return 4.50;  // g4-standard-48, whole VM, us-central1 on-demand (Oct 2025)
    case AT::kNvidiaA100_80gb:
      return 5.07;
    case AT::kNvidiaTeslaA100:
      return 3.67;
    case AT::kNvidiaL4:
      return 0.71;
    case AT::kNvidiaTeslaT4:
      return 0.35;
    case AT::kNvidiaTeslaV100:
      return 2.48;
    case AT::kNvidiaTeslaP100:
      return 1.46;
    case AT::kNvidiaTeslaP4:
      return 0.60;
    default:
      return 2.0;  // a type the table lacks (K80, TPU enums): a planning value, no list price
  }
}

double TpuChipHourPrice(std::string_view family) {
  if (family == "v5e") return 1.20;
  if (family == "v5p") return 4.20;
  if (family == "v4") return 3.22;
  if (family == "v6e") return 2.70;  // us-central1 on-demand
  // TPU7x has no public list price (access through the account team). Planning value: v5p's
  // price per bf16 FLOP relative to H100 (~0.8x) applied to B200's $15 at 7x's 2,307 TFLOP/s.
  if (family == "7x") return 12.0;
  // cloud-tpu: a v2-8 host lists at $4.50/h, a v3-8 at $8.00/h, 4 chips each.
  if (family == "v2") return 1.125;
  return 2.0;  // v3
}

// Sources (docs/capacity-model.md, "Prices"): Compute Engine's resource-based CUDs, roughly 37%
// off for 1 year and 55% for 3; DWS pricing, "up to ~53%" off, for calendar mode and flex-start;
// spot at the low end of Google's 60-91% for GPUs (A3 spot is scarce), Cloud TPU spot's "60-70%".
double Discounted(double on_demand, ConsumptionModel model, std::string_view term, bool tpu) {
  switch (model) {
    case ConsumptionModel::kOnDemand:
      return on_demand;
    case ConsumptionModel::kReservation:
      if (term == "3y") return on_demand * 0.45;
      if (term == "1y") return on_demand * 0.63;
      return on_demand * 0.5;  // calendar mode
    case ConsumptionModel::kFlexStart:
      return on_demand * 0.5;
    case ConsumptionModel::kSpot:
      return on_demand * (tpu ? 0.35 : 0.4);
  }
  return on_demand;
}

double NodeHourPrice(const PricedNode& node, ConsumptionModel model, std::string_view term) {
  double on_demand = 0;
  if (node.tpu) {
    on_demand = TpuChipHourPrice(node.tpu_family) * node.tpu_chips;
  } else if (node.gpu != AT::kUnspecified) {
    on_demand = GpuHourPrice(node.gpu) * node.gpus;
  } else {
    on_demand = kVcpuHourPrice * node.vcpus;
  }
  return Discounted(on_demand, model, term, node.tpu);
}

double AttachedNodeHourPrice(const std::optional<PricedNode>& vm, AcceleratorType attached,
                             int count, ConsumptionModel model) {
  if (attached == AT::kTpuV2 || attached == AT::kTpuV3) {
    const double chips = count / 2.0;  // two TensorCores a chip
    return Discounted(TpuChipHourPrice(attached == AT::kTpuV2 ? "v2" : "v3") * chips, model, "",
                      true);
  }
  const double vm_hour = vm ? NodeHourPrice(*vm, model, "") : 0;
  const double gpus = GpuHourPrice(attached) * count;
  return vm_hour + (model == ConsumptionModel::kSpot ? gpus * 0.4 : gpus);
}

int64_t NodesHourlyMicros(double price_per_node_hour, int64_t nodes) {
  return static_cast<int64_t>(price_per_node_hour * 1e6) * nodes;
}

}  // namespace trainyard::cost
