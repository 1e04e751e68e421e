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
  // The vendor's Ed25519 public keys ("ed25519:" and 43 base64url characters, as
  // `plugin-license offline keygen` prints them), COMPILED IN. With keys the plugin plays only on a
  // ticket the vendor signed (docs/signed-ticket.md: the license relay, or signed offline
  // responses); a forged ticket, a copied one, a stopped or fake agent cannot make it play. Never
  // fill them from the environment, a file or the agent (withOverrides leaves them alone): whoever
  // can set those can name a key of their own. A key that does not parse silences the plugin
  // rather than dropping to the unsigned rules. Empty: the ticket's rules (docs/license-ticket.md).
  juce::StringArray ticketKeys;

  // `projectId` and `app` as compiled in, overridden at run time by PLUGIN_LICENSE_PROJECT_ID and
  // PLUGIN_LICENSE_APP when they are set (tests, demos). `ticketKeys` never: they stay as compiled in.
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

// Every word on the panel's controls, for a vendor's language or house style:
// ActivationComponent::setStrings. The sentences that say the state and the result of an action
// are the CLI's and the license manager's (so a musician and support read the same words), not
// these.
struct Strings {
  juce::String title{"License"};
  juce::String codePlaceholder{"Activation code"};
  juce::String activate{"Activate"};
  juce::String deactivate{"Deactivate (move to another computer)"};
  juce::String checkNow{"Check now"};
  juce::String saveRequest{juce::String::fromUTF8("Save offline request\xe2\x80\xa6")};
  juce::String loadResponse{juce::String::fromUTF8("Load offline response\xe2\x80\xa6")};
  juce::String manage{juce::String::fromUTF8("Manage licenses\xe2\x80\xa6")};
  juce::String copyAddress{"Copy address"};  // beside the license manager's address, when no browser opens
};

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

  // The size it is made with (an editor can take getWidth()/getHeight()), and the smallest at
  // which every control and three lines of message fit.
  static constexpr int preferredWidth = 460, preferredHeight = 340;
  static constexpr int minimumWidth = 400, minimumHeight = 340;

  // The panel's own colours, set on the panel (setColour) or on its LookAndFeel; unset, the
  // look and feel's window background, label text, and light grey for the message. The controls
  // are JUCE's TextButton, TextEditor and Label, coloured by their own ids through the look and
  // feel given to the panel (setLookAndFeel).
  enum ColourIds {
    backgroundColourId = 0x7e1c0001,
    titleColourId = 0x7e1c0002,
    stateColourId = 0x7e1c0003,
    messageColourId = 0x7e1c0004,
  };

  void setStrings(const Strings &strings);
  const Strings &strings() const noexcept { return strings_; }

  // Called on the message thread. The panel takes the gate's Monitor::onChange while it exists
  // (one callback per Monitor): listen here instead.
  std::function<void(const plc::CheckResult &)> onStateChange;  // the state it opened with (once the message loop runs), then whenever the state shown changes
  std::function<void()> onActivated;    // an activation (online or by an offline response) from this panel succeeded
  std::function<void()> onDeactivated;  // a deactivation from this panel succeeded

  // What the file choosers call (also for scripting and tests): writes the offline request for
  // this computer into `file`, or imports the response in `file`.
  void saveOfflineRequestTo(const juce::File &file);
  void loadOfflineResponseFrom(const juce::File &file);

  bool isBusy() const noexcept { return busy_; }
  juce::String stateText() const { return state_.getText(); }
  juce::String messageText() const { return message_.getText(); }
  // The license manager's address, shown (selectable, with Copy address) when "Manage licenses…"
  // could open no web browser; empty otherwise. It holds the page's one-time token: it is shown
  // only here, never logged.
  juce::String managerAddress() const { return address_.isVisible() ? address_.getText() : juce::String(); }

  void resized() override;
  void paint(juce::Graphics &g) override;
  void colourChanged() override { applyColours(); }
  void lookAndFeelChanged() override { applyColours(); }

  // Component IDs of the controls, for tests and accessibility tools.
  static constexpr const char *codeFieldId = "code";
  static constexpr const char *activateId = "activate";
  static constexpr const char *deactivateId = "deactivate";
  static constexpr const char *checkNowId = "check-now";
  static constexpr const char *saveRequestId = "save-offline-request";
  static constexpr const char *loadResponseId = "load-offline-response";
  static constexpr const char *manageId = "manage";
  static constexpr const char *addressId = "manager-address";
  static constexpr const char *copyAddressId = "copy-address";

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
  void showAddress(const juce::String &url);
  void applyColours();
  juce::Colour colourOr(int id, juce::Colour fallback) const;

  LicenseGate &gate_;
  std::unique_ptr<Worker> worker_;
  std::unique_ptr<juce::FileChooser> chooser_;
  Strings strings_;
  juce::Label title_, state_, message_;
  juce::TextEditor code_, address_;
  juce::TextButton activate_, deactivate_, checkNow_, saveRequest_, loadResponse_, manage_, copyAddress_;
  juce::String pendingRequest_;  // an offline request made, not saved yet
  bool busy_ = false;

  JUCE_DECLARE_NON_COPYABLE_WITH_LEAK_DETECTOR(ActivationComponent)
};

}  // namespace plugin_license
