// The words for a license that is not valid, one template per reason, in UTF-8. MADE FROM
// packages/cli/page/reason-words.json, the one table the license manager page reads too: change
// the table, never this file, then run
//   UPDATE_REASON_WORDS=1 pnpm exec vitest run packages/cli/test/reason-words.test.ts
// (which fails while the two differ). describeState fills {code} (" with code" and its hint, or
// nothing), {vendor} (the vendor's name) and {reason} (the reason as the agent sent it).
#pragma once

namespace plugin_license {

inline const char *reasonTemplate(plc::Reason reason) {
  switch (reason) {
    case plc::Reason::notActivated: return "Not activated on this computer. Enter your activation code and press Activate.";
    case plc::Reason::codeRevoked: return "This license{code} was revoked. Contact {vendor} for a new code.";
    case plc::Reason::codeNotFound: return "The license service does not know this code{code}. Check it, or contact {vendor}.";
    case plc::Reason::deactivated: return "Released from this computer (moved to another one). Activate again to use it here.";
    case plc::Reason::graceExpired: return "The license could not be checked online for too long. Connect this computer to the internet, then press Check now.";
    case plc::Reason::clockTampered: return "This computer's clock looks wrong. Set the date and time correctly, then press Check now.";
    case plc::Reason::cacheInvalid: return "The license stored on this computer is damaged, or was copied from another computer. Activate again.";
    case plc::Reason::unsignedTicket: return "This plugin plays only with a license signed by {vendor}, and none is here yet. Go online so the license agent fetches one, or activate again.";
    case plc::Reason::none:
    case plc::Reason::other: break;
  }
  return "Not licensed ({reason}).";
}

}  // namespace plugin_license
