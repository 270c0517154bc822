#include "runtime/head_actor.h"

namespace drk::runtime {

HeadActor::HeadActor(std::ostream& out, std::unique_ptr<ProgressObserver> progress,
                     std::function<void()> on_finished, std::function<void(msg::HostStats::Reader)> on_host_stats,
                     std::function<void(const std::string&)> on_progress)
    : out_(out),
      progress_(std::move(progress)),
      on_finished_(std::move(on_finished)),
      on_host_stats_(std::move(on_host_stats)),
      on_progress_(std::move(on_progress)) {}

void HeadActor::on_message(ActorContext&, msg::Envelope::Reader envelope) {
  const auto body = envelope.getBody();
  if (body.isHostStats()) {
    if (on_host_stats_) on_host_stats_(body.getHostStats());
    return;
  }
  if (!body.isPayload() || !progress_) return;
  const auto progress = progress_->observe(envelope);
  if (!progress) return;
  out_ << progress->line << std::endl;
  if (on_progress_) on_progress_(progress->line);
  if (progress->finished && !finished_) {
    finished_ = true;
    if (on_finished_) on_finished_();
  }
}

}  // namespace drk::runtime
