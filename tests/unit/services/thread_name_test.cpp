#include "services/thread_name.h"

#include <gtest/gtest.h>

#include <thread>

namespace trainyard {
namespace {

TEST(ThreadNameTest, AThreadCarriesItsNameCutToWhatTheKernelKeeps) {
  std::string short_name, long_name;
  std::thread([&] {
    NameThisThread("ty-runtime");
    short_name = ThisThreadsName();
    NameThisThread("ty-a-name-longer-than-fifteen");
    long_name = ThisThreadsName();
  }).join();
  EXPECT_EQ(short_name, "ty-runtime");
  EXPECT_EQ(long_name, "ty-a-name-longe");
}

}  // namespace
}  // namespace trainyard
