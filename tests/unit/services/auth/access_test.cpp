// Who may do what: roles against route access, and a project's token against other projects.
#include "services/auth/access.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

Principal TokenOf(Role role, const std::string& project = "team-a", int64_t number = 7) {
  Principal p;
  p.token_id = 1;
  p.project_id = project;
  p.project_number = number;
  p.role = role;
  return p;
}

TEST(AccessTest, RolesParseByName) {
  EXPECT_EQ(ParseRole("viewer"), Role::kViewer);
  EXPECT_EQ(ParseRole("editor"), Role::kEditor);
  EXPECT_EQ(ParseRole("admin"), Role::kAdmin);
  EXPECT_FALSE(ParseRole("Admin").has_value());
  EXPECT_FALSE(ParseRole("fleet-admin").has_value());
}

TEST(AccessTest, EachRoleCoversWhatTheOnesBelowItDo) {
  struct Row {
    Role role;
    bool viewer, editor, admin;
  };
  for (const Row& r :
       {Row{Role::kViewer, true, false, false}, Row{Role::kEditor, true, true, false},
        Row{Role::kAdmin, true, true, true}}) {
    const Principal p = TokenOf(r.role);
    EXPECT_EQ(Authorize(p, Access::kProjectViewer, "team-a", "x").ok(), r.viewer);
    EXPECT_EQ(Authorize(p, Access::kProjectEditor, "team-a", "x").ok(), r.editor);
    EXPECT_EQ(Authorize(p, Access::kProjectAdmin, "team-a", "x").ok(), r.admin);
    EXPECT_FALSE(Authorize(p, Access::kFleetAdmin, "", "x").ok()) << RoleName(r.role);
  }
}

TEST(AccessTest, AProjectIsNamedByItsIdOrItsNumber) {
  const Principal p = TokenOf(Role::kViewer);
  EXPECT_TRUE(Authorize(p, Access::kProjectViewer, "team-a", "x").ok());
  EXPECT_TRUE(Authorize(p, Access::kProjectViewer, "7", "x").ok());
  EXPECT_FALSE(Authorize(p, Access::kProjectViewer, "07", "x").ok());
  EXPECT_FALSE(Authorize(p, Access::kProjectViewer, "", "x").ok());
}

// The same words whether project B exists or not, and whatever the role: nothing leaks.
TEST(AccessTest, AnotherProjectIsDeniedAlikeWhetherOrNotItExists) {
  const Principal p = TokenOf(Role::kAdmin);
  Status b = Authorize(p, Access::kProjectViewer, "team-b", "aiplatform.customJobs.get");
  Status none = Authorize(p, Access::kProjectViewer, "no-such", "aiplatform.customJobs.get");
  EXPECT_EQ(b.code(), Code::kPermissionDenied);
  EXPECT_EQ(b.message(),
            "Permission 'aiplatform.customJobs.get' denied on resource 'projects/team-b' (or it "
            "may not exist).");
  EXPECT_EQ(none.message(),
            "Permission 'aiplatform.customJobs.get' denied on resource 'projects/no-such' (or it "
            "may not exist).");
}

TEST(AccessTest, TheFleetAdminMayDoAnythingAnywhere) {
  Principal p;
  p.fleet_admin = true;
  for (Access a : {Access::kProjectViewer, Access::kProjectEditor, Access::kProjectAdmin}) {
    EXPECT_TRUE(Authorize(p, a, "team-b", "x").ok());
  }
  EXPECT_TRUE(Authorize(p, Access::kFleetAdmin, "", "x").ok());
}

TEST(AccessTest, PublicRoutesNeedNothing) {
  EXPECT_TRUE(Authorize(TokenOf(Role::kViewer), Access::kPublic, "", "x").ok());
}

}  // namespace
}  // namespace trainyard
