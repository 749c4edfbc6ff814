#pragma once
// The free nodes of one pool, as the scheduler's commit sees them, grouped into whole units.
//
// Choosing nodes used to be a query per admission that grouped and sorted every free node of the
// pool (4,000 rows for one A3 reservation): a 1,000-admission cycle took seconds. The leader is the
// only allocator, so the commit reads the admitted pools' free nodes once, chooses here in memory,
// and claims exactly those ordinals with a compare-and-set UPDATE (a node that changed meanwhile
// makes the claim come back short and the admission is skipped).
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace trainyard {

struct FreeNode {
  int64_t ordinal = 0;
  bool warm = false;                     // READY: booted; otherwise it must be provisioned first
  std::vector<std::string> image_cache;  // images already pulled onto it
};

class FreeUnits {
 public:
  // Units are ordinals [u*hosts, (u+1)*hosts); only units whose every node is free count.
  // block_nodes > 0: the pool's nodes sit in blocks of that many (a rack under a compact placement
  // policy), block b holding ordinals [b*block_nodes, (b+1)*block_nodes).
  FreeUnits(int hosts_per_unit, const std::vector<FreeNode>& nodes, int block_nodes = 0);

  struct Taken {
    std::vector<int64_t> ordinals;  // node ordinals of the units, in order; empty: none taken
    bool cold = false;              // some node must be provisioned first
    bool uncached = false;          // some node must pull the image first
    int blocks = 0;                 // blocks the units span (0: the pool has none)
  };
  // Takes `count` units, preferring warm units whose every node caches `image`, then warm ones,
  // then cold ones, lowest unit first within each. In a pool of blocks it first looks for one
  // block that holds all `count` (the one with the fewest free units that does, so big gaps stay
  // whole for big gangs) and spreads over blocks only when none does, over the fewest (the
  // freest first). Takes nothing when fewer than `count` are free.
  Taken Take(int count, const std::string& image);

  size_t units() const { return warm_.size() + cold_.size(); }

 private:
  void Remove(int64_t unit);

  int hosts_;
  int block_units_ = 0;     // units per block; 0: no blocks
  std::set<int64_t> warm_;  // every node READY
  std::set<int64_t> cold_;  // at least one node to provision
  std::map<std::string, std::set<int64_t>>
      warm_by_image_;  // warm units caching the image on all nodes
  std::map<int64_t, std::vector<std::string>> images_of_;  // unit -> its entries in warm_by_image_
};

}  // namespace trainyard
