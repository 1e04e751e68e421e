#pragma once

#include "PluginProcessor.h"

class ExampleEditor : public juce::AudioProcessorEditor {
 public:
  explicit ExampleEditor(ExampleProcessor &owner);

  void resized() override { activation_.setBounds(getLocalBounds()); }

 private:
  plugin_license::ActivationComponent activation_;

  JUCE_DECLARE_NON_COPYABLE_WITH_LEAK_DETECTOR(ExampleEditor)
};
