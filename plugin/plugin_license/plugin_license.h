/*******************************************************************************
 The block below describes the properties of this module, and is read by
 the Projucer to automatically generate project code that uses it.

 BEGIN_JUCE_MODULE_DECLARATION

  ID:                 plugin_license
  vendor:             plugin-license
  version:            0.1.0
  name:               plugin-license: licensing inside the plugin
  description:        The license gate for the audio thread and the activation panel for the editor, on the local plugin-license agent
  website:            https://github.com/plugin-license
  license:            MIT
  minimumCppStandard: 17

  dependencies:       juce_audio_basics, juce_events, juce_gui_basics
  OSXFrameworks:      IOKit CoreFoundation
  windowsLibs:        advapi32

 END_JUCE_MODULE_DECLARATION

*******************************************************************************/

#pragma once
#define PLUGIN_LICENSE_H_INCLUDED

#include <juce_audio_basics/juce_audio_basics.h>
#include <juce_events/juce_events.h>
#include <juce_gui_basics/juce_gui_basics.h>

#include "plc/plc.hpp"

namespace plugin_license {

// What a plugin is licensed as: its project id and the vendor's namespace, compiled in.
struct Settings {
  juce::String projectId;  // the project (plugin) id from the vendor dashboard, a UUID
  juce::String app;        // the vendor's namespace (the agent's, the installer's): e.g. "acme-audio"
  // macOS, for a sandboxed plugin (AUv3, or an AU in a sandboxing host): the vendor's app group,
  // e.g. "ABCDE12345.com.acme.audio"; the plugin needs it in com.apple.security.application-groups.
  juce::String appGroup;
  // While neither the agent nor a ticket says anything (no ticket here, no agent answering): plc's
  // default, silent after 5 s (time for an agent started on demand to answer); or
  // plc::UnknownPolicy::keepPlaying(), which lets a computer with no ticket and no agent play.
  plc::UnknownPolicy unknown = plc::MonitorOptions{}.unknown;
  // The vendor's installed plugin-license executable, for "Manage licenses…" and to start the
  // agent when none answers; empty: the PLUGIN_LICENSE_EXECUTABLE variable, else the installers'
  // place for vendorName and executableName.
  juce::String executable;
  juce::String executableName = juce::String(plc::MonitorOptions{}.executableName);
  // Start `EXECUTABLE agent run --app APP` (detached, at most once per 30 s) when no agent answers.
  bool startAgent = plc::MonitorOptions{}.startAgent;
  juce::String vendorName;  // for messages ("contact Acme Audio") and the installers' folder; empty: "the vendor"
  juce::String productName;  // the plugin's name on the license manager's page; empty: its project id

  // `projectId` and `app` as compiled in, overridden at run time by PLUGIN_LICENSE_PROJECT_ID and
  // PLUGIN_LICENSE_APP when they are set (tests, demos).
  static Settings withOverrides(Settings compiledIn);
};

// Owned by the AudioProcessor. Its Monitor judges the license ticket in the constructor, so the
// first block is right: a licensed plugin plays from block 0 (no fade in at load), one that is not
// licensed never plays a block. isLicensed() is one atomic load, for any thread; process() fades
// the audio to silence, and back, over a few milliseconds when the state changes after that.
class LicenseGate {
 public:
  explicit LicenseGate(Settings settings, std::chrono::milliseconds fade = std::chrono::milliseconds(10));

  bool isLicensed() const noexcept { return monitor_.isLicensed(); }

  // From prepareToPlay.
  void prepare(double sampleRate) noexcept;
  // From processBlock, after the plugin's own processing: silence while not licensed.
  void process(juce::AudioBuffer<float> &buffer) noexcept { apply(buffer); }
  void process(juce::AudioBuffer<double> &buffer) noexcept { apply(buffer); }

  plc::Monitor &monitor() noexcept { return monitor_; }
  const Settings &settings() const noexcept { return settings_; }

 private:
  template <typename T>
  void apply(juce::AudioBuffer<T> &buffer) noexcept;

  Settings settings_;
  plc::Monitor monitor_;
  std::chrono::milliseconds fade_;
  double step_ = 1.0 / 480.0;  // gain change per sample
  double gain_ = -1.0;         // -1: nothing played yet (the first block starts at its target)
};

// The state of a license in words, for people: "Licensed on this computer …", "Not activated …";
// from the ticket while the agent is away (result.origin == plc::Origin::ticket): "Licensed
// (checked offline, until …)", or why not, in the license manager's words.
juce::String describeState(const plc::CheckResult &result, const Settings &settings);

// The activation panel, placed in the plugin's editor (not a dialog window). Shows the state in
// words; activates a code, deactivates ("move to another computer"), checks now, runs the offline
// exchange through files, and starts "Manage licenses…". The agent's calls run on a thread of
// their own; every result comes back on the message thread; destroying the panel (or the editor)
// in the middle of a call is safe: the call is abandoned at once (the agent finishes what it was
// asked, and the gate hears of it), and no callback reaches the dead panel.
class ActivationComponent : public juce::Component {
 public:
  explicit ActivationComponent(LicenseGate &gate);
  ~ActivationComponent() override;

  // What the file choosers call (also for scripting and tests): writes the offline request for
  // this computer into `file`, or imports the response in `file`.
  void saveOfflineRequestTo(const juce::File &file);
  void loadOfflineResponseFrom(const juce::File &file);

  bool isBusy() const noexcept { return busy_; }
  juce::String stateText() const { return state_.getText(); }
  juce::String messageText() const { return message_.getText(); }

  void resized() override;
  void paint(juce::Graphics &g) override;

  // Component IDs of the controls, for tests and accessibility tools.
  static constexpr const char *codeFieldId = "code";
  static constexpr const char *activateId = "activate";
  static constexpr const char *deactivateId = "deactivate";
  static constexpr const char *checkNowId = "check-now";
  static constexpr const char *saveRequestId = "save-offline-request";
  static constexpr const char *loadResponseId = "load-offline-response";
  static constexpr const char *manageId = "manage";

 private:
  class Worker;
  struct Outcome;

  void run(juce::String working, std::function<Outcome(plc::Client &)> job);
  void finished(const Outcome &outcome);
  void showState(const plc::CheckResult &result);
  void setBusy(bool busy);
  void activate();
  void deactivate();
  void checkNow();
  void chooseRequestFile();
  void makeOfflineRequest(const juce::File &saveTo);
  void chooseResponseFile();
  void manageLicenses();
  static juce::String startDetached(const juce::StringArray &args);

  LicenseGate &gate_;
  std::unique_ptr<Worker> worker_;
  std::unique_ptr<juce::FileChooser> chooser_;
  juce::Label title_, state_, message_;
  juce::TextEditor code_;
  juce::TextButton activate_{"Activate"}, deactivate_{"Deactivate (move to another computer)"}, checkNow_{"Check now"},
      saveRequest_{"Save offline request..."}, loadResponse_{"Load offline response..."}, manage_{"Manage licenses..."};
  juce::String pendingRequest_;  // an offline request made, not saved yet
  bool busy_ = false;

  JUCE_DECLARE_NON_COPYABLE_WITH_LEAK_DETECTOR(ActivationComponent)
};

}  // namespace plugin_license
