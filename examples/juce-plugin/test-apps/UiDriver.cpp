// plugin-license-ui-driver: shows the ActivationComponent in a window, as a plugin editor would,
// and drives it from commands on stdin, one per line (the tests run it under Xvfb):
//
//   type TEXT          selects the code field's text and types TEXT over it, key by key
//   click ID           clicks the control with that component ID (activate, deactivate, …)
//   save-request PATH  saves the offline request into PATH (what the save chooser does)
//   load-response PATH imports the response in PATH (what the open chooser does)
//   screenshot PATH    writes the window's content as PNG
//   style              sets every string (Strings) to hostile text and the panel's colours
//   controls           reports every control: {"id","text","visible"}
//   pixel X Y          reports the colour at X,Y of the panel's snapshot as AARRGGBB
//   clipboard          reports the system clipboard's text
//   close              destroys the panel (an editor closed in the middle of a call)
//   open               makes a new panel
//   quit
//
// Prints JSON lines: {"event":"panel","state":"…","message":"…","busy":false,"address":"…",
// "size":[W,H]} whenever what the panel shows changes, {"event":"callback","name":"…"} for the
// panel's callbacks, and {"event":"done","command":"…"} after each command (with "value").
#include <JuceHeader.h>

#include <iostream>
#include <string>
#include <thread>

namespace {

juce::String json(const juce::String &text) { return juce::JSON::toString(juce::var(text)); }

void emit(const juce::String &line) {
  std::printf("%s\n", line.toRawUTF8());
  std::fflush(stdout);
}

class DriverWindow : public juce::DocumentWindow, private juce::Timer {
 public:
  explicit DriverWindow(plugin_license::LicenseGate &gate)
      : DocumentWindow("plugin-license panel", juce::Colours::darkgrey, juce::DocumentWindow::closeButton), gate_(gate) {
    setUsingNativeTitleBar(false);
    open();
    setVisible(true);
    startTimer(20);
  }

  void closeButtonPressed() override { juce::JUCEApplication::getInstance()->systemRequestedQuit(); }

  void run(const juce::String &line) {
    const juce::String verb = line.upToFirstOccurrenceOf(" ", false, false);
    const juce::String arg = line.fromFirstOccurrenceOf(" ", false, false);
    juce::String error, value;
    if (verb == "open") {
      open();
    } else if (verb == "close") {
      panel_.reset();
      setContentNonOwned(nullptr, false);
    } else if (verb == "quit") {
      juce::JUCEApplication::getInstance()->systemRequestedQuit();
      return;
    } else if (panel_ == nullptr) {
      error = "no panel: open one first";
    } else if (verb == "type") {
      auto *field = dynamic_cast<juce::TextEditor *>(panel_->findChildWithID(plugin_license::ActivationComponent::codeFieldId));
      // As a person does: select what is there, then type over it.
      field->grabKeyboardFocus();
      field->selectAll();
      for (auto c : arg) field->keyPressed(juce::KeyPress(static_cast<int>(c), juce::ModifierKeys(), c));
      codeLength_ = field->getTotalNumChars();
    } else if (verb == "click") {
      auto *button = dynamic_cast<juce::Button *>(panel_->findChildWithID(arg));
      if (button == nullptr) error = "no button " + arg;
      else if (!button->isEnabled()) error = "button " + arg + " is disabled";
      else button->triggerClick();
    } else if (verb == "save-request") {
      panel_->saveOfflineRequestTo(juce::File(arg));
    } else if (verb == "load-response") {
      panel_->loadOfflineResponseFrom(juce::File(arg));
    } else if (verb == "screenshot") {
      const juce::Image image = panel_->createComponentSnapshot(panel_->getLocalBounds());
      juce::File file(arg);
      file.deleteFile();
      juce::FileOutputStream out(file);
      if (!out.openedOk() || !juce::PNGImageFormat().writeImageToStream(image, out)) error = "could not write " + arg;
    } else if (verb == "style") {
      plugin_license::Strings s;
      const juce::String odd = juce::String::fromUTF8(" \"q\" 'a' $HOME * \\ \xc3\xa9\xe2\x80\xa6");
      s.title = "Lizenz" + odd;
      s.codePlaceholder = "Aktivierungscode" + odd;
      s.activate = "Aktivieren" + odd;
      s.deactivate = "Deaktivieren" + odd;
      s.checkNow = "Jetzt pr" + juce::String::fromUTF8("\xc3\xbc") + "fen";
      s.saveRequest = "Anfrage speichern" + odd;
      s.loadResponse = "Antwort laden" + odd;
      s.manage = "Lizenzen verwalten" + odd;
      s.copyAddress = "Adresse kopieren" + odd;
      panel_->setStrings(s);
      panel_->setColour(plugin_license::ActivationComponent::backgroundColourId, juce::Colour(0xff123456));
      panel_->setColour(plugin_license::ActivationComponent::messageColourId, juce::Colour(0xffabcdef));
    } else if (verb == "controls") {
      juce::Array<juce::var> list;
      for (auto *c : panel_->getChildren()) {
        auto *o = new juce::DynamicObject();
        o->setProperty("id", c->getComponentID());
        if (auto *b = dynamic_cast<juce::Button *>(c)) o->setProperty("text", b->getButtonText());
        else if (auto *l = dynamic_cast<juce::Label *>(c)) o->setProperty("text", l->getText());
        else if (auto *t = dynamic_cast<juce::TextEditor *>(c)) o->setProperty("text", t->getTextToShowWhenEmpty());
        o->setProperty("visible", c->isVisible());
        list.add(juce::var(o));
      }
      value = juce::JSON::toString(juce::var(list), true);
    } else if (verb == "pixel") {
      const juce::Image image = panel_->createComponentSnapshot(panel_->getLocalBounds());
      const auto xy = juce::StringArray::fromTokens(arg, " ", "");
      value = json(image.getPixelAt(xy[0].getIntValue(), xy[1].getIntValue()).toString());
    } else if (verb == "clipboard") {
      value = json(juce::SystemClipboard::getTextFromClipboard());
    } else {
      error = "unknown command " + verb;
    }
    emit("{\"event\":\"done\",\"command\":" + json(verb) + (verb == "type" ? ",\"field_chars\":" + juce::String(codeLength_) : juce::String()) +
         (value.isEmpty() ? juce::String() : ",\"value\":" + value) + (error.isEmpty() ? juce::String() : ",\"error\":" + json(error)) + "}");
  }

 private:
  void open() {
    panel_ = std::make_unique<plugin_license::ActivationComponent>(gate_);
    panel_->onActivated = [] { emit("{\"event\":\"callback\",\"name\":\"activated\"}"); };
    panel_->onDeactivated = [] { emit("{\"event\":\"callback\",\"name\":\"deactivated\"}"); };
    panel_->onStateChange = [](const plc::CheckResult &r) {
      emit("{\"event\":\"callback\",\"name\":\"state\",\"valid\":" + juce::String(r.license && r.license->valid ? "true" : "false") + "}");
    };
    setContentNonOwned(panel_.get(), true);
    centreWithSize(getWidth(), getHeight());
  }

  // What the panel shows, reported when it changes.
  void timerCallback() override {
    if (panel_ == nullptr) return;
    const juce::String line = "{\"event\":\"panel\",\"state\":" + json(panel_->stateText()) + ",\"message\":" + json(panel_->messageText()) +
                              ",\"busy\":" + (panel_->isBusy() ? "true" : "false") + ",\"licensed\":" + (gate_.isLicensed() ? "true" : "false") +
                              ",\"address\":" + json(panel_->managerAddress()) + ",\"size\":[" + juce::String(panel_->getWidth()) + "," + juce::String(panel_->getHeight()) + "]}";
    if (line != last_) emit(line);
    last_ = line;
  }

  plugin_license::LicenseGate &gate_;
  std::unique_ptr<plugin_license::ActivationComponent> panel_;
  juce::String last_;
  int codeLength_ = 0;
};

class UiDriverApp : public juce::JUCEApplication {
 public:
  const juce::String getApplicationName() override { return "plugin-license-ui-driver"; }
  const juce::String getApplicationVersion() override { return "0.1.0"; }
  bool moreThanOneInstanceAllowed() override { return true; }

  void initialise(const juce::String &) override {
    plugin_license::Settings settings;
    settings.projectId = "00000000-0000-4000-8000-000000000000";  // replaced by PLUGIN_LICENSE_PROJECT_ID
    settings.vendorName = "the plugin-license example";
    settings.productName = "plugin-license example";
    // The keys the build compiled into the example plugin (--ticket-key), compiled in here too.
    settings.ticketKeys.addTokens(PLUGIN_LICENSE_EXAMPLE_TICKET_KEYS, ",", "");
    settings.ticketKeys.removeEmptyStrings();
    gate_ = std::make_unique<plugin_license::LicenseGate>(plugin_license::Settings::withOverrides(settings));
    window_ = std::make_unique<DriverWindow>(*gate_);
    // Commands arrive on a thread of their own and run on the message thread.
    juce::Component::SafePointer<DriverWindow> safe(window_.get());
    std::thread([safe] {
      std::string line;
      while (std::getline(std::cin, line)) {
        juce::MessageManager::callAsync([safe, text = juce::String::fromUTF8(line.c_str())] {
          if (auto *w = safe.getComponent()) w->run(text.trim());
        });
      }
      juce::MessageManager::callAsync([] { juce::JUCEApplication::getInstance()->systemRequestedQuit(); });
    }).detach();
  }

  void shutdown() override {
    window_.reset();
    gate_.reset();
  }

 private:
  std::unique_ptr<plugin_license::LicenseGate> gate_;
  std::unique_ptr<DriverWindow> window_;
};

}  // namespace

START_JUCE_APPLICATION(UiDriverApp)
