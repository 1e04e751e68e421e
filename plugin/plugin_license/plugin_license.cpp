// The JUCE module plugin_license: LicenseGate and ActivationComponent (see plugin_license.h).
// The C client itself is compiled by plugin_license_plc.c.
#ifdef PLUGIN_LICENSE_H_INCLUDED
#error "Include plugin_license.h before this file only through the module: add the module with juce_add_module"
#endif

#include "plugin_license.h"
#include "plugin_license_reason_words.h"

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#if JUCE_LINUX || JUCE_MAC || JUCE_BSD
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <unistd.h>
#endif

namespace plugin_license {

namespace {

const juce::String ellipsis = juce::String::fromUTF8("\xe2\x80\xa6");

juce::String fromUtf8(const std::string &text) { return juce::String::fromUTF8(text.data(), static_cast<int>(text.size())); }

juce::String vendorOf(const Settings &s) { return s.vendorName.isNotEmpty() ? s.vendorName : juce::String("the vendor"); }

// A reason's words (plugin_license_reason_words.h) with {code}, {vendor} and {reason} filled in
// one pass: what fills one placeholder is never read as another.
juce::String fillWords(const char *utf8Template, const juce::String &code, const juce::String &vendor, const juce::String &reason) {
  const juce::String words = juce::String::fromUTF8(utf8Template);
  juce::String out;
  int from = 0;
  for (int open = words.indexOfChar('{'); open >= 0; open = words.indexOfChar(open + 1, '{')) {
    const int close = words.indexOfChar(open, '}');
    if (close < 0) break;
    const juce::String key = words.substring(open + 1, close);
    const juce::String *value = key == "code" ? &code : key == "vendor" ? &vendor : key == "reason" ? &reason : nullptr;
    if (value == nullptr) continue;
    out << words.substring(from, open) << *value;
    from = close + 1;
    open = close;
  }
  return out + words.substring(from);
}

// "21 Feb 2027" from seconds since the epoch (0: unknown).
juce::String dayOf(std::int64_t seconds) {
  if (seconds <= 0) return "an unknown date";
  return juce::Time(seconds * 1000).formatted("%d %b %Y");
}

juce::String slotsOf(const plc::License &l) {
  if (l.activations < 0 || l.maxActivations < 0) return {};
  return juce::String(l.activations) + " of " + juce::String(l.maxActivations) + " computers";
}

}  // namespace

Settings Settings::withOverrides(Settings compiledIn) {
  const auto project = juce::SystemStats::getEnvironmentVariable("PLUGIN_LICENSE_PROJECT_ID", {});
  const auto app = juce::SystemStats::getEnvironmentVariable("PLUGIN_LICENSE_APP", {});
  if (project.isNotEmpty()) compiledIn.projectId = project;
  if (app.isNotEmpty()) compiledIn.app = app;
  return compiledIn;
}

// ------------------------------------------------------------------------------ LicenseGate

namespace {
plc::MonitorOptions monitorOptions(const Settings &s) {
  plc::MonitorOptions o;
  o.app = s.app.toStdString();
  o.appGroup = s.appGroup.toStdString();
  o.unknown = s.unknown;
  o.executable = s.executable.toStdString();
  o.vendor = s.vendorName.toStdString();
  o.executableName = s.executableName.toStdString();
  o.startAgent = s.startAgent;
  for (const auto &key : s.ticketKeys) o.ticketKeys.push_back(key.toStdString());
  return o;
}
}  // namespace

LicenseGate::LicenseGate(Settings settings, std::chrono::milliseconds fade)
    : settings_(std::move(settings)), monitor_(settings_.projectId.toStdString(), monitorOptions(settings_)), fade_(fade) {}

void LicenseGate::prepare(double sampleRate) noexcept {
  const double samples = std::max(1.0, sampleRate * static_cast<double>(fade_.count()) / 1000.0);
  step_ = 1.0 / samples;
}

template <typename T>
void LicenseGate::apply(juce::AudioBuffer<T> &buffer) noexcept {
  const double target = isLicensed() ? 1.0 : 0.0;
  const int n = buffer.getNumSamples();
  if (gain_ < 0.0) gain_ = target;  // the first block: no fade from an arbitrary start
  if (gain_ == target) {
    if (target == 0.0) buffer.clear();
    return;
  }
  // A linear ramp of `step_` per sample toward the target; the rest of the block at the target.
  const int needed = static_cast<int>(std::ceil(std::abs(target - gain_) / step_));
  const int ramp = std::min(n, needed);
  const double end = ramp == needed ? target : gain_ + (target > gain_ ? step_ : -step_) * ramp;
  buffer.applyGainRamp(0, ramp, static_cast<T>(gain_), static_cast<T>(end));
  if (ramp < n && end == 0.0) buffer.clear(ramp, n - ramp);
  gain_ = end;
}

template void LicenseGate::apply(juce::AudioBuffer<float> &) noexcept;
template void LicenseGate::apply(juce::AudioBuffer<double> &) noexcept;

// ------------------------------------------------------------------------------ describeState

juce::String describeState(const plc::CheckResult &result, const Settings &settings) {
  if (!result.license) {
    const plc::Status st = result.status;
    if (st == plc::Status::notRunning)
      return "The license agent is not running on this computer. Reinstall " + vendorOf(settings) + "'s software, or start its license agent.";
    if (st == plc::Status::agentOutdated) return "The license agent needs an update: install " + vendorOf(settings) + "'s current version.";
    if (st == plc::Status::foreignAgent || st == plc::Status::foreignFolder)
      return fromUtf8(result.holder.empty() ? std::string(plc::describe(st)) : result.holder) + ".";
    if (st == plc::Status::timeout) return "The license agent does not answer. It may be busy; this panel tries again by itself.";
    return "The license agent cannot be reached (" + fromUtf8(plc::describe(st)) + ").";
  }
  const plc::License &l = *result.license;
  const juce::String code = l.codeHint.empty() ? juce::String() : " with code " + fromUtf8(l.codeHint);
  // The plugin judged its ticket itself (the agent not reached yet, or gone).
  // With the vendor's keys: what the vendor's signature holds until (docs/signed-ticket.md).
  const juce::String signedBy = l.signedUntilSeconds > 0 ? " Signed by " + vendorOf(settings) + " until " + dayOf(l.signedUntilSeconds) + "." : juce::String();
  if (result.origin == plc::Origin::ticket) {
    if (l.valid && l.signedUntilSeconds > 0) return "Licensed" + code + ", signed by " + vendorOf(settings) + " until " + dayOf(l.signedUntilSeconds) + " (checked offline).";
    if (l.valid) return "Licensed" + code + " (checked offline, until " + dayOf(l.graceUntilSeconds) + ").";
    if (l.reason == plc::Reason::cacheInvalid)
      return "The license file on this computer is not valid here " + juce::String::fromUTF8("\xe2\x80\x94") + " open Manage licenses" + ellipsis;
  }
  if (l.valid) {
    if (l.source == plc::Source::offline) return "Licensed by an offline activation" + code + ", until " + dayOf(l.graceUntilSeconds) + "." + signedBy;
    const juce::String slots = slotsOf(l);
    juce::String text = "Licensed on this computer" + code + (slots.isEmpty() ? juce::String() : " (" + slots + ")") + ".";
    if (l.graceUntilSeconds > 0) text << " Works offline until " << dayOf(l.graceUntilSeconds) << ".";
    return text + signedBy;
  }
  return fillWords(reasonTemplate(l.reason), code, vendorOf(settings), fromUtf8(l.reasonText));
}

// ------------------------------------------------------------------------------ ActivationComponent

// What an action found, handed from the worker thread to the message thread.
struct ActivationComponent::Outcome {
  juce::String done;     // words on success
  juce::String failure;  // words on failure (empty: success)
  plc::CheckResult state;  // the license after the call, when it returns one
  juce::String requestDocument, requestFileName;
  juce::File saveTo;  // where the request goes; none: ask with a file chooser
  bool clearCode = false;  // the code was used: empty the field (kept after a refusal, to correct it)
  juce::String managerAddress;  // the license manager's url, when no browser could show it
  enum class Done { other, activated, deactivated } kind = Done::other;
};

// One thread for the panel's calls, one at a time. Its wait is interruptible: destroying it
// abandons the call at once and joins.
class ActivationComponent::Worker {
 public:
  explicit Worker(const std::string &socketPath) : client_(socketPath.empty() ? nullptr : socketPath.c_str()) {
    if (plc_waker_open(&waker_) == PLC_OK) plc_set_interrupt(client_.raw(), plc_waker_handle(&waker_));
  }
  ~Worker() {
    plc_waker_signal(&waker_);
    if (thread_.joinable()) thread_.join();
    plc_waker_close(&waker_);
  }

  // What ends a wait of the panel's thread at once (a descriptor on POSIX).
  intptr_t interruptHandle() const { return plc_waker_handle(&waker_); }

  void start(std::function<void(plc::Client &)> job) {
    if (thread_.joinable()) thread_.join();  // the previous call has posted its outcome already
    thread_ = std::thread([this, job = std::move(job)] { job(client_); });
  }

 private:
  plc::Client client_;
  plc_waker waker_{PLC_NO_INTERRUPT, PLC_NO_INTERRUPT};
  std::thread thread_;
};

namespace {

// The agent's words for a failed call, with what it was (and who holds the agent's path, when
// that is why).
juce::String failureOf(const juce::String &what, plc::Status status, const std::optional<plc::AgentError> &error, const std::string &holder = {}) {
  if (status == plc::Status::agentOutdated) return what + " needs a newer license agent: install the current version.";
  if (error) return what + " failed: " + fromUtf8(error->message);
  return what + " failed: " + fromUtf8(holder.empty() ? std::string(plc::describe(status)) : holder) + ".";
}

// What starting the license manager found: its address and whether a browser shows it, or why
// it did not start (`error`), or that the panel went away meanwhile.
struct ManagerStart {
  juce::String error;
  juce::String url;
  bool opened = true;
  juce::String reason;
  bool interrupted = false;
};

// How long the manager is given to print its line: it starts, listens, and tries the browser
// (which it gives up to 5 s to fail) before it prints.
constexpr int managerLineDeadlineMs = 20000;

// The manager's line: {"url": "http://127.0.0.1:PORT/#token=…", "pid": …, "opened": bool,
// "reason": "…"}. A line without "opened" (an older executable) counts as opened, as before.
ManagerStart parseManagerLine(const juce::String &line) {
  ManagerStart m;
  const juce::var v = juce::JSON::parse(line);
  const juce::String url = v.getProperty("url", juce::var()).toString();
  if (!v.isObject() || !url.startsWith("http://127.0.0.1:")) {
    m.error = "it gave no address";
    return m;
  }
  m.url = url;
  const juce::var opened = v.getProperty("opened", juce::var(true));
  m.opened = !opened.isBool() || static_cast<bool>(opened);
  m.reason = v.getProperty("reason", juce::var()).toString();
  return m;
}

#if JUCE_LINUX || JUCE_MAC || JUCE_BSD
// The first line on `fd`, read until a newline, end of file, the deadline, or the interrupt; at
// most 4 KB. "" with `why` set when there is none.
juce::String readFirstLine(int fd, intptr_t interrupt, int deadlineMs, juce::String &why, bool &interrupted) {
  std::string got;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(deadlineMs);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      why = "it gave no address within " + juce::String(deadlineMs / 1000) + " s";
      return {};
    }
    pollfd fds[2] = {{fd, POLLIN, 0}, {static_cast<int>(interrupt), POLLIN, 0}};
    const int n = poll(fds, interrupt == PLC_NO_INTERRUPT ? 1 : 2, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why = juce::String(strerror(errno));
      return {};
    }
    if (interrupt != PLC_NO_INTERRUPT && (fds[1].revents & POLLIN) != 0) {
      interrupted = true;
      return {};
    }
    if (n == 0 || (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    char buffer[512];
    const ssize_t r = read(fd, buffer, sizeof buffer);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      why = "it stopped before it gave its address";
      return {};
    }
    got.append(buffer, static_cast<size_t>(r));
    const auto nl = got.find('\n');
    if (nl != std::string::npos) return fromUtf8(got.substr(0, nl));
    if (got.size() > 4096) {
      why = "its first line is too long";
      return {};
    }
  }
}
#endif

// Starts the license manager so that it outlives this plugin and is never its child to reap, by
// plc's one launcher (plc_start_program: on POSIX a double fork, so the program is adopted by init
// and never lingers as a zombie of the host; on Windows a detached CreateProcessW with plc's
// quoting), its standard output on POSIX a pipe this reads its line from; then reads the line
// (bounded, interruptible: runs on the panel's thread). On Windows the line is not read and the
// page counts as opened.
ManagerStart startManager(const juce::StringArray &args, intptr_t interrupt) {
  ManagerStart m;
  std::vector<std::string> owned;
  for (const auto &a : args) owned.push_back(a.toStdString());
  std::vector<const char *> argv;
  for (const auto &a : owned) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  int error = 0;
#if JUCE_LINUX || JUCE_MAC || JUCE_BSD
  intptr_t output = -1;
  const plc_status started = plc_start_program(argv.data(), &output, &error);
  if (started != PLC_OK) {
    m.error = error != 0 ? juce::String(strerror(error)) : juce::String(plc_strerror(started));
    return m;
  }
  juce::String why;
  const juce::String line = readFirstLine(static_cast<int>(output), interrupt, managerLineDeadlineMs, why, m.interrupted);
  // The manager prints nothing else on standard output; closing ends nothing of it.
  close(static_cast<int>(output));
  if (m.interrupted) return m;
  if (line.isEmpty()) {
    m.error = why;
    return m;
  }
  return parseManagerLine(line);
#else
  juce::ignoreUnused(interrupt);
  if (plc_start_program(argv.data(), nullptr, &error) != PLC_OK) m.error = "it did not start";
  return m;
#endif
}

}  // namespace

ActivationComponent::ActivationComponent(LicenseGate &gate) : gate_(gate), worker_(std::make_unique<Worker>(gate.monitor().socketPath())) {
  title_.setFont(title_.getFont().withHeight(18.0f).boldened());
  state_.setJustificationType(juce::Justification::topLeft);
  state_.setMinimumHorizontalScale(1.0f);
  message_.setJustificationType(juce::Justification::topLeft);
  message_.setMinimumHorizontalScale(1.0f);

  code_.setInputRestrictions(256);
  code_.onReturnKey = [this] { activate(); };
  // The manager's address: selectable and copyable, never editable.
  address_.setReadOnly(true);
  address_.setCaretVisible(false);
  address_.setSelectAllWhenFocused(true);
  address_.setTitle("License manager address");
  copyAddress_.onClick = [this] { juce::SystemClipboard::copyTextToClipboard(address_.getText()); };
  setStrings(strings_);

  code_.setComponentID(codeFieldId);
  activate_.setComponentID(activateId);
  deactivate_.setComponentID(deactivateId);
  checkNow_.setComponentID(checkNowId);
  saveRequest_.setComponentID(saveRequestId);
  loadResponse_.setComponentID(loadResponseId);
  manage_.setComponentID(manageId);
  address_.setComponentID(addressId);
  copyAddress_.setComponentID(copyAddressId);

  activate_.onClick = [this] { activate(); };
  deactivate_.onClick = [this] { deactivate(); };
  checkNow_.onClick = [this] { checkNow(); };
  saveRequest_.onClick = [this] { chooseRequestFile(); };
  loadResponse_.onClick = [this] { chooseResponseFile(); };
  manage_.onClick = [this] { manageLicenses(); };

  for (juce::Component *c : std::initializer_list<juce::Component *>{&title_, &state_, &code_, &activate_, &deactivate_, &checkNow_, &saveRequest_, &loadResponse_, &manage_, &message_})
    addAndMakeVisible(c);
  addChildComponent(address_);
  addChildComponent(copyAddress_);
  applyColours();

  showState(gate_.monitor().last());
  // Opened within milliseconds of the plugin's creation: nothing known yet, which is not "the agent is not running".
  if (!gate_.monitor().settled()) state_.setText("Checking the license" + ellipsis, juce::dontSendNotification);
  // From the monitor's thread to the message thread; once onChange({}) returns in the
  // destructor, no call is running or will run.
  juce::Component::SafePointer<ActivationComponent> safe(this);
  gate_.monitor().onChange([safe](const plc::CheckResult &r) {
    juce::MessageManager::callAsync([safe, r] {
      if (auto *self = safe.getComponent()) self->showState(r);
    });
  });
  // The state it opened with, for an onStateChange the editor sets after this constructor: the
  // first call comes once the message loop runs again, so the vendor's own controls start right.
  juce::MessageManager::callAsync([safe] {
    if (auto *self = safe.getComponent(); self != nullptr && self->onStateChange) self->onStateChange(self->gate_.monitor().last());
  });
  setSize(preferredWidth, preferredHeight);
}

void ActivationComponent::setStrings(const Strings &strings) {
  strings_ = strings;
  title_.setText(strings_.title, juce::dontSendNotification);
  code_.setTextToShowWhenEmpty(strings_.codePlaceholder, juce::Colours::grey);
  code_.setTitle(strings_.codePlaceholder);
  activate_.setButtonText(strings_.activate);
  deactivate_.setButtonText(strings_.deactivate);
  checkNow_.setButtonText(strings_.checkNow);
  saveRequest_.setButtonText(strings_.saveRequest);
  loadResponse_.setButtonText(strings_.loadResponse);
  manage_.setButtonText(strings_.manage);
  copyAddress_.setButtonText(strings_.copyAddress);
}

// A colour set on the panel, else on its look and feel, else the default given.
juce::Colour ActivationComponent::colourOr(int id, juce::Colour fallback) const {
  if (isColourSpecified(id)) return findColour(id);
  if (getLookAndFeel().isColourSpecified(id)) return getLookAndFeel().findColour(id);
  return fallback;
}

void ActivationComponent::applyColours() {
  const juce::Colour text = getLookAndFeel().findColour(juce::Label::textColourId);
  title_.setColour(juce::Label::textColourId, colourOr(titleColourId, text));
  state_.setColour(juce::Label::textColourId, colourOr(stateColourId, text));
  message_.setColour(juce::Label::textColourId, colourOr(messageColourId, juce::Colours::lightgrey));
  repaint();
}

ActivationComponent::~ActivationComponent() {
  gate_.monitor().onChange({});
  worker_.reset();  // abandons a call in flight at once
}

void ActivationComponent::paint(juce::Graphics &g) { g.fillAll(colourOr(backgroundColourId, getLookAndFeel().findColour(juce::ResizableWindow::backgroundColourId))); }

void ActivationComponent::resized() {
  auto area = getLocalBounds().reduced(12);
  title_.setBounds(area.removeFromTop(24));
  state_.setBounds(area.removeFromTop(52));
  area.removeFromTop(4);
  auto row = area.removeFromTop(28);
  activate_.setBounds(row.removeFromRight(100));
  row.removeFromRight(8);
  code_.setBounds(row);
  area.removeFromTop(8);
  row = area.removeFromTop(28);
  checkNow_.setBounds(row.removeFromRight(100));
  row.removeFromRight(8);
  deactivate_.setBounds(row);
  area.removeFromTop(8);
  row = area.removeFromTop(28);
  const int half = (row.getWidth() - 8) / 2;
  saveRequest_.setBounds(row.removeFromLeft(half));
  row.removeFromLeft(8);
  loadResponse_.setBounds(row);
  area.removeFromTop(8);
  row = area.removeFromTop(28);
  manage_.setBounds(row.removeFromRight(160));
  area.removeFromTop(4);
  if (address_.isVisible()) {
    row = area.removeFromBottom(28);
    copyAddress_.setBounds(row.removeFromRight(110));
    row.removeFromRight(8);
    address_.setBounds(row);
    area.removeFromBottom(4);
  }
  message_.setBounds(area);
}

void ActivationComponent::showAddress(const juce::String &url) {
  address_.setText(url, false);
  address_.moveCaretToTop(false);  // shows where the address starts
  address_.setVisible(url.isNotEmpty());
  copyAddress_.setVisible(url.isNotEmpty());
  if (url.isEmpty()) address_.clear();
  resized();
}

void ActivationComponent::showState(const plc::CheckResult &result) {
  const juce::String text = describeState(result, gate_.settings());
  const bool changed = text != state_.getText();
  state_.setText(text, juce::dontSendNotification);
  const bool known = result.license.has_value();
  const bool licensed = known && result.license->valid;
  const bool held = known && !result.license->codeHint.empty();
  if (!busy_) {
    activate_.setEnabled(known && !licensed);
    code_.setEnabled(known && !licensed);
    deactivate_.setEnabled(held && result.license->source != plc::Source::offline);
    checkNow_.setEnabled(held);
    saveRequest_.setEnabled(known && !licensed);
    loadResponse_.setEnabled(known && !licensed);
  }
  if (changed && onStateChange) onStateChange(result);
}

void ActivationComponent::setBusy(bool busy) {
  busy_ = busy;
  for (juce::Component *c : std::initializer_list<juce::Component *>{&code_, &activate_, &deactivate_, &checkNow_, &saveRequest_, &loadResponse_})
    c->setEnabled(!busy);
  if (!busy) showState(gate_.monitor().last());
}

void ActivationComponent::run(juce::String working, std::function<Outcome(plc::Client &)> job) {
  if (busy_) return;
  setBusy(true);
  message_.setText(working + ellipsis, juce::dontSendNotification);
  juce::Component::SafePointer<ActivationComponent> safe(this);
  worker_->start([safe, job = std::move(job)](plc::Client &client) {
    Outcome outcome = job(client);
    // An interrupted call belongs to a panel that is gone: nothing to tell.
    if (outcome.state.status == plc::Status::interrupted) return;
    juce::MessageManager::callAsync([safe, outcome] {
      if (auto *self = safe.getComponent()) self->finished(outcome);
    });
  });
}

void ActivationComponent::finished(const Outcome &outcome) {
  message_.setText(outcome.failure.isNotEmpty() ? outcome.failure : outcome.done, juce::dontSendNotification);
  if (outcome.clearCode) code_.clear();
  setBusy(false);
  if (outcome.state.license) showState(outcome.state);
  if (outcome.managerAddress.isNotEmpty()) showAddress(outcome.managerAddress);
  // Last: a callback may delete this panel (an editor that closes itself once licensed).
  juce::Component::SafePointer<ActivationComponent> alive(this);
  if (outcome.failure.isEmpty() && outcome.kind == Outcome::Done::activated && onActivated) onActivated();
  if (alive == nullptr) return;
  if (outcome.failure.isEmpty() && outcome.kind == Outcome::Done::deactivated && onDeactivated) onDeactivated();
  if (alive == nullptr) return;
  if (outcome.failure.isEmpty() && outcome.requestDocument.isNotEmpty()) {
    pendingRequest_ = outcome.requestDocument;
    if (outcome.saveTo != juce::File()) {
      saveOfflineRequestTo(outcome.saveTo);
      return;
    }
    chooser_ = std::make_unique<juce::FileChooser>("Save the offline request",
                                                   juce::File::getSpecialLocation(juce::File::userDocumentsDirectory).getChildFile(outcome.requestFileName), "*.txt");
    juce::Component::SafePointer<ActivationComponent> safe(this);
    chooser_->launchAsync(juce::FileBrowserComponent::saveMode | juce::FileBrowserComponent::canSelectFiles | juce::FileBrowserComponent::warnAboutOverwriting,
                          [safe](const juce::FileChooser &c) {
                            if (auto *self = safe.getComponent(); self != nullptr && c.getResult() != juce::File()) self->saveOfflineRequestTo(c.getResult());
                          });
  }
}

void ActivationComponent::activate() {
  const juce::String code = code_.getText().trim();
  if (code.isEmpty()) {
    message_.setText("Enter your activation code first.", juce::dontSendNotification);
    return;
  }
  const std::string projectId = gate_.settings().projectId.toStdString();
  run("Activating", [projectId, code = code.toStdString()](plc::Client &client) {
    Outcome o;
    o.state = client.activate(projectId, code);
    o.clearCode = o.state.license.has_value();
    if (o.clearCode) {
      o.done = "Activated.";
      o.kind = Outcome::Done::activated;
    }
    else o.failure = failureOf("Activation", o.state.status, o.state.agentError, o.state.holder);
    return o;
  });
}

void ActivationComponent::deactivate() {
  const std::string projectId = gate_.settings().projectId.toStdString();
  run("Deactivating", [projectId](plc::Client &client) {
    Outcome o;
    o.state = client.deactivate(projectId);
    if (o.state.license) {
      o.done = "Deactivated: the slot is free for another computer.";
      o.kind = Outcome::Done::deactivated;
    }
    else o.failure = failureOf("Deactivation", o.state.status, o.state.agentError, o.state.holder);
    return o;
  });
}

void ActivationComponent::checkNow() {
  const std::string projectId = gate_.settings().projectId.toStdString();
  run("Checking with the license service", [projectId](plc::Client &client) {
    Outcome o;
    o.state = client.refresh(projectId);
    if (o.state.license) o.done = "Checked.";
    else o.failure = failureOf("The check", o.state.status, o.state.agentError, o.state.holder);
    return o;
  });
}

void ActivationComponent::chooseRequestFile() { makeOfflineRequest({}); }

// The request is made first (the agent stores its nonce), then saved: into `saveTo`, or where the
// user chooses.
void ActivationComponent::makeOfflineRequest(const juce::File &saveTo) {
  const std::string projectId = gate_.settings().projectId.toStdString();
  run("Making the offline request", [projectId, saveTo, code = code_.getText().trim().toStdString()](plc::Client &client) {
    Outcome o;
    const plc::OfflineRequest r = client.offlineRequest(projectId, code);
    o.state.status = r.status;
    o.saveTo = saveTo;
    if (r.status == plc::Status::ok) {
      o.requestDocument = fromUtf8(r.document);
      o.requestFileName = fromUtf8(r.fileName);
      o.done = "Choose where to save the offline request.";
    } else {
      o.failure = failureOf("The offline request", r.status, r.agentError, r.holder);
    }
    return o;
  });
}

void ActivationComponent::saveOfflineRequestTo(const juce::File &file) {
  if (pendingRequest_.isEmpty()) {
    makeOfflineRequest(file);
    return;
  }
  if (!file.replaceWithText(pendingRequest_ + "\n", false, false, "\n")) {
    message_.setText("Could not write " + file.getFullPathName() + ": choose a folder you can write to.", juce::dontSendNotification);
    return;
  }
  pendingRequest_.clear();
  message_.setText("Offline request saved to " + file.getFullPathName() +
                       ". On a computer that is online, answer it with the license manager (or: " + gate_.settings().executableName +
                       " offline activate " + file.getFileName() + "), then load the response here.",
                   juce::dontSendNotification);
}

void ActivationComponent::chooseResponseFile() {
  chooser_ = std::make_unique<juce::FileChooser>("Load the offline response", juce::File::getSpecialLocation(juce::File::userDocumentsDirectory), "*");
  juce::Component::SafePointer<ActivationComponent> safe(this);
  chooser_->launchAsync(juce::FileBrowserComponent::openMode | juce::FileBrowserComponent::canSelectFiles, [safe](const juce::FileChooser &c) {
    if (auto *self = safe.getComponent(); self != nullptr && c.getResult() != juce::File()) self->loadOfflineResponseFrom(c.getResult());
  });
}

// The file is read on the worker thread, by plc's one reader of picked files: only a regular file,
// at most an offline response's size; a FIFO, a device or a folder is refused before any read.
void ActivationComponent::loadOfflineResponseFrom(const juce::File &file) {
  const juce::String shown = file.getFullPathName();
  run("Importing the offline response", [path = shown.toStdString(), shown](plc::Client &client) {
    Outcome o;
    const plc::Document document = plc::readDocument(path);
    if (document.status != plc::Status::ok) {
      o.state.status = document.status;
      o.failure = "Could not load " + shown + ": " + fromUtf8(plc::describe(document.status)) + ".";
      return o;
    }
    if (document.text.empty() || document.text.find('\0') != std::string::npos) {
      o.state.status = plc::Status::invalidArgument;
      o.failure = shown + (document.text.empty() ? " is empty" : " is not text") + ": choose the offline response file.";
      return o;
    }
    o.state = client.offlineImport(document.text);
    if (o.state.license) {
      o.done = "Offline response imported.";
      o.kind = Outcome::Done::activated;
    }
    else o.failure = failureOf("The import", o.state.status, o.state.agentError, o.state.holder);
    return o;
  });
}

void ActivationComponent::manageLicenses() {
  const Settings &s = gate_.settings();
  juce::String path = s.executable;
  if (path.isEmpty()) {
    // plc's one rule, the one plc::Monitor starts the agent by: PLUGIN_LICENSE_EXECUTABLE, else
    // the installers' place for the vendor and the executable's name (the path even when absent).
    char found[1024];
    plc_default_executable(s.vendorName.toRawUTF8(), s.executableName.toRawUTF8(), found, sizeof found);
    path = fromUtf8(found);
  }
  const juce::File exe(path);
  if (path.isEmpty() || !exe.existsAsFile()) {
    message_.setText("The license manager is not installed (" + exe.getFullPathName() + "). Reinstall " + vendorOf(s) + "'s software.", juce::dontSendNotification);
    return;
  }
  juce::StringArray args{exe.getFullPathName()};
  if (s.app.isNotEmpty()) args.addArray({"--app", s.app});
  args.add("manager");
  // The page offers this plugin for activation, by its name, even before it is activated.
  if (s.projectId.isNotEmpty()) args.addArray({"--project", s.productName.isNotEmpty() ? s.projectId + "=" + s.productName : s.projectId});
  showAddress({});
  // The manager opens the page in the browser itself, says in its line whether it could, and
  // stops by itself when no page is open. Its start and its line are waited for on the panel's
  // thread.
  const juce::String shown = exe.getFullPathName();
  run("Starting the license manager", [args, shown, interrupt = worker_->interruptHandle()](plc::Client &) {
    Outcome o;
    const ManagerStart m = startManager(args, interrupt);
    if (m.interrupted) {
      o.state.status = plc::Status::interrupted;
      return o;
    }
    if (m.error.isNotEmpty()) o.failure = "Could not start " + shown + " (" + m.error + ").";
    else if (m.opened) o.done = "The license manager opens in your web browser.";
    else {
      // The address is the musician's own (a one-time token): shown in its own field, never in
      // the message, never logged.
      o.managerAddress = m.url;
      o.done = "No web browser could be opened here" + (m.reason.isNotEmpty() ? " (" + m.reason + ")" : juce::String()) +
               ". Open this address in a web browser on this computer:";
    }
    return o;
  });
}

}  // namespace plugin_license
