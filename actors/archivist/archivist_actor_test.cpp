#include "actors/archivist/archivist_actor.h"
#include "runtime/payload.h"

#include "actors/archivist/archive.h"
#include "tests/doctest_drk.h"
#include "tests/support/fake_actor_context.h"
#include "tests/support/run_dir.h"

using drk::msg::Envelope;

DRK_TEST_CASE("a step report is shown to the head only after it is on record") {
  drk::testing::RunDir dir;
  drk::runtime::ActorSpec spec;
  spec.name = "archivist";
  spec.run_dir = dir.path().string();
  drk::testing::FakeActorContext context(spec);
  auto actor = drk::archivist::make_archivist_actor(spec);
  drk::testing::deliver(*actor, context, [](Envelope::Builder envelope) {
    auto report = drk::runtime::init_payload<drk::msg::StepReport>(envelope);
    report.setStep(4);
    report.setFinished(true);
  });
  auto archive = drk::archivist::Archive::open(drk::archivist::Archive::default_path(spec.run_dir), true);
  DRK_REQUIRE(archive.ok());
  auto steps = archive->steps();
  DRK_REQUIRE(steps.ok());
  DRK_REQUIRE(steps->size() == 1);
  DRK_CHECK((*steps)[0].finished);
  const auto shown = context.sent_of<drk::msg::StepReport>();
  DRK_REQUIRE(shown.size() == 1);
  DRK_CHECK(shown[0]->recipient == "head");
  DRK_CHECK(drk::runtime::payload_of<drk::msg::StepReport>(shown[0]->envelope()).value().getStep() == 4);
}
