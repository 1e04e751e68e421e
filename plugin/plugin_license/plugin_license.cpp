// The JUCE module plugin_license: LicenseGate and ActivationComponent (see plugin_license.h).
// The C client itself is compiled by plugin_license_plc.c.
#ifdef PLUGIN_LICENSE_H_INCLUDED
#error "Include plugin_license.h before this file only through the module: add the module with juce_add_module"
#endif

#include "plugin_license.h"

#include <string>
#include <thread>
#include <vector>

#if JUCE_LINUX || JUCE_MAC || JUCE_BSD
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace plugin_license {

namespace {

const juce::String ellipsis = juce::String::fromUTF8("\xe2\x80\xa6");

juce::String fromUtf8(const std::string &text) { return juce::String::fromUTF8(text.data(), static_cast<int>(text.size())); }

juce::String vendorOf(const Settings &s) { return s.vendorName.isNotEmpty() ? s.vendorName : juce::String("the vendor"); }

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
  if (result.origin == plc::Origin::ticket) {
    if (l.valid) return "Licensed" + code + " (checked offline, until " + dayOf(l.graceUntilSeconds) + ").";
    if (l.reason == plc::Reason::cacheInvalid)
      return "The license file on this computer is not valid here " + juce::String::fromUTF8("\xe2\x80\x94") + " open Manage licenses" + ellipsis;
  }
  if (l.valid) {
    if (l.source == plc::Source::offline) return "Licensed by an offline activation" + code + ", until " + dayOf(l.graceUntilSeconds) + ".";
    const juce::String slots = slotsOf(l);
    juce::String text = "Licensed on this computer" + code + (slots.isEmpty() ? juce::String() : " (" + slots + ")") + ".";
    if (l.graceUntilSeconds > 0) text << " Works offline until " << dayOf(l.graceUntilSeconds) << ".";
    return text;
  }
  switch (l.reason) {
    case plc::Reason::notActivated: return "Not activated on this computer. Enter your activation code and press Activate.";
    case plc::Reason::codeRevoked: return "This license" + code + " was revoked. Contact " + vendorOf(settings) + " for a new code.";
    case plc::Reason::codeNotFound: return "The license service does not know this code" + code + ". Check it, or contact " + vendorOf(settings) + ".";
    case plc::Reason::deactivated: return "Released from this computer (moved to another one). Activate again to use it here.";
    case plc::Reason::graceExpired:
      return "The license could not be checked online for too long. Connect this computer to the internet, then press Check now.";
    case plc::Reason::clockTampered: return "This computer's clock looks wrong. Set the date and time correctly, then press Check now.";
    case plc::Reason::cacheInvalid: return "The license stored on this computer is damaged, or was copied from another computer. Activate again.";
    case plc::Reason::none:
    case plc::Reason::other: break;
  }
  return "Not licensed (" + fromUtf8(l.reasonText) + ").";
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

}  // namespace

ActivationComponent::ActivationComponent(LicenseGate &gate) : gate_(gate), worker_(std::make_unique<Worker>(gate.monitor().socketPath())) {
  title_.setText("License", juce::dontSendNotification);
  title_.setFont(title_.getFont().withHeight(18.0f).boldened());
  state_.setJustificationType(juce::Justification::topLeft);
  state_.setMinimumHorizontalScale(1.0f);
  message_.setJustificationType(juce::Justification::topLeft);
  message_.setMinimumHorizontalScale(1.0f);
  message_.setColour(juce::Label::textColourId, juce::Colours::lightgrey);

  code_.setTextToShowWhenEmpty("Activation code", juce::Colours::grey);
  code_.setTitle("Activation code");
  code_.setInputRestrictions(256);
  code_.onReturnKey = [this] { activate(); };
  saveRequest_.setButtonText("Save offline request" + ellipsis);
  loadResponse_.setButtonText("Load offline response" + ellipsis);
  manage_.setButtonText("Manage licenses" + ellipsis);

  code_.setComponentID(codeFieldId);
  activate_.setComponentID(activateId);
  deactivate_.setComponentID(deactivateId);
  checkNow_.setComponentID(checkNowId);
  saveRequest_.setComponentID(saveRequestId);
  loadResponse_.setComponentID(loadResponseId);
  manage_.setComponentID(manageId);

  activate_.onClick = [this] { activate(); };
  deactivate_.onClick = [this] { deactivate(); };
  checkNow_.onClick = [this] { checkNow(); };
  saveRequest_.onClick = [this] { chooseRequestFile(); };
  loadResponse_.onClick = [this] { chooseResponseFile(); };
  manage_.onClick = [this] { manageLicenses(); };

  for (juce::Component *c : std::initializer_list<juce::Component *>{&title_, &state_, &code_, &activate_, &deactivate_, &checkNow_, &saveRequest_, &loadResponse_, &manage_, &message_})
    addAndMakeVisible(c);

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
  setSize(460, 310);
}

ActivationComponent::~ActivationComponent() {
  gate_.monitor().onChange({});
  worker_.reset();  // abandons a call in flight at once
}

void ActivationComponent::paint(juce::Graphics &g) { g.fillAll(getLookAndFeel().findColour(juce::ResizableWindow::backgroundColourId)); }

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
  message_.setBounds(area.withTrimmedTop(4));
}

void ActivationComponent::showState(const plc::CheckResult &result) {
  state_.setText(describeState(result, gate_.settings()), juce::dontSendNotification);
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
    if (o.clearCode) o.done = "Activated.";
    else o.failure = failureOf("Activation", o.state.status, o.state.agentError, o.state.holder);
    return o;
  });
}

void ActivationComponent::deactivate() {
  const std::string projectId = gate_.settings().projectId.toStdString();
  run("Deactivating", [projectId](plc::Client &client) {
    Outcome o;
    o.state = client.deactivate(projectId);
    if (o.state.license) o.done = "Deactivated: the slot is free for another computer.";
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
    if (o.state.license) o.done = "Offline response imported.";
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
  // The manager opens the page in the browser itself, and stops by itself when it is closed.
  const juce::String error = startDetached(args);
  if (error.isEmpty()) message_.setText("The license manager opens in your web browser.", juce::dontSendNotification);
  else message_.setText("Could not start " + exe.getFullPathName() + " (" + error + ").", juce::dontSendNotification);
}

// Starts a program that outlives this plugin and is never its child to reap: on POSIX by a double
// fork (the program is adopted by init, so it never lingers as a zombie of the host), its output
// to /dev/null; elsewhere JUCE's ChildProcess, which leaves it running. "" or why it failed.
juce::String ActivationComponent::startDetached(const juce::StringArray &args) {
#if JUCE_LINUX || JUCE_MAC || JUCE_BSD
  // Everything the child needs is made before fork(): after it, only async-signal-safe calls.
  std::vector<std::string> owned;
  for (const auto &a : args) owned.push_back(a.toStdString());
  std::vector<char *> argv;
  for (auto &a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  int report[2];
  if (pipe(report) != 0) return juce::String(strerror(errno));
  fcntl(report[1], F_SETFD, FD_CLOEXEC);
  const pid_t middle = fork();
  if (middle < 0) {
    const int e = errno;
    close(report[0]);
    close(report[1]);
    return juce::String(strerror(e));
  }
  if (middle == 0) {
    close(report[0]);
    setsid();
    const pid_t program = fork();
    if (program < 0) {
      const int e = errno;
      if (write(report[1], &e, sizeof e) < 0) _exit(1);
      _exit(1);
    }
    if (program == 0) {
      const int null = open("/dev/null", O_RDWR);
      if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
      }
      execv(argv[0], argv.data());
      const int e = errno;  // only reached when exec failed: tell the plugin why
      if (write(report[1], &e, sizeof e) < 0) _exit(127);
      _exit(127);
    }
    _exit(0);
  }
  close(report[1]);
  int status = 0;
  while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  // The pipe closes on exec (nothing read) or carries exec's errno; bounded by the exec itself.
  int e = 0;
  ssize_t got;
  while ((got = read(report[0], &e, sizeof e)) < 0 && errno == EINTR) {
  }
  close(report[0]);
  return got == static_cast<ssize_t>(sizeof e) ? juce::String(strerror(e)) : juce::String();
#else
  juce::ChildProcess process;
  return process.start(args, 0) ? juce::String() : juce::String("it did not start");
#endif
}

}  // namespace plugin_license
