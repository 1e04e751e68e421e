; The Windows installer of a vendor's license agent: an example to copy and brand.
; Built by `pnpm package` with Debian's makensis (64-bit Unicode stubs), which defines:
;   NAME (file name, e.g. acme-license), APP (namespace; empty: the executable's baked one),
;   BASE_URL (empty: the baked one), PRODUCT, PRODUCT_ID (what the product is known by across
;   releases, e.g. acme-gain), COMPANY, VERSION, VENDOR_DIR, EXE (the built executable) and
;   OUTFILE; with plugins (pnpm package --plugin), also PLUGINS (the folder of the vendor's
;   plugins, one sub-folder per format) and PLUGINS_NSH (its where-they-go text and Start-menu
;   shortcuts). The program places them ("plugins install") and removes them ("plugins
;   uninstall"), exactly as its record of this product's plugins says.
;
; One vendor, several products: each product has its own installer, uninstaller
; (uninstall-PRODUCT_ID.exe) and Settings > Apps entry, and owns only its own plugins. The
; program (shared, the last installed product's), its agent and the license data go with the
; last product's uninstall.
;
; Per user: no administrator rights, nothing outside the user's own folders.
;   setup.exe [/S]                          install, or upgrade in place (licenses are kept)
;   uninstall.exe [/S] [/RELEASE=1] [/PURGE=1]
;       /RELEASE=1  first give this computer's activations back (through the agent)
;       /PURGE=1    also remove the license data and settings (kept by default)
; The uninstaller's page offers the same two choices as checkboxes.
; Exit codes: 0 done; 2 a step failed (the message says what to do; the previous install works).

!ifndef NAME | VERSION | EXE | OUTFILE | PRODUCT | PRODUCT_ID | COMPANY | VENDOR_DIR
  !error "pnpm package defines NAME, APP, BASE_URL, PRODUCT, PRODUCT_ID, COMPANY, VERSION, VENDOR_DIR, EXE and OUTFILE"
!endif

Unicode true
Target amd64-unicode
!ifdef FAST_COMPRESSION
; PLUGIN_LICENSE_INSTALLER_COMPRESSION=fast: development builds and the tests.
SetCompressor zlib
!else
SetCompressor /SOLID lzma
!endif
RequestExecutionLevel user
ManifestDPIAware true

Name "${PRODUCT}"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\${VENDOR_DIR}"
; This product's entry in Settings > Apps; an earlier release had one for every product.
!define UNINST_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\${NAME}.${PRODUCT_ID}"
!define LEGACY_UNINST_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\${NAME}"
!define UNINSTALLER "$INSTDIR\uninstall-${PRODUCT_ID}.exe"
InstallDirRegKey HKCU "${UNINST_KEY}" "InstallLocation"
BrandingText "${COMPANY}"

VIProductVersion "${VERSION}.0"
VIAddVersionKey "ProductName" "${PRODUCT}"
VIAddVersionKey "CompanyName" "${COMPANY}"
VIAddVersionKey "FileDescription" "${PRODUCT} setup"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "LegalCopyright" "${COMPANY}"

!if "${APP}" != ""
  !define APP_ARGS '--app "${APP}"'
!else
  !define APP_ARGS ''
!endif
!define PROGRAM "$INSTDIR\${NAME}.exe"

!include MUI2.nsh
!include LogicLib.nsh
!include FileFunc.nsh

!ifdef PLUGINS
  !include "${PLUGINS_NSH}"
  ; Each line the program prints about the plugins is on the install page (and the details list).
  ShowInstDetails show
  !define MUI_FINISHPAGE_TEXT "${PRODUCT} is installed, with your plugins:$\r$\n$\r$\n${PLUGINS_WHERE}$\r$\n$\r$\nIf your music software does not list them, rescan plugins in its settings (most scan new plugins when they start)."
!endif

!define MUI_ABORTWARNING
!insertmacro MUI_PAGE_INSTFILES
; The last page offers the license manager (a page in the browser) to activate right away.
!define MUI_FINISHPAGE_RUN
!define MUI_FINISHPAGE_RUN_TEXT "Open the license manager to activate ${PRODUCT}"
!define MUI_FINISHPAGE_RUN_FUNCTION OpenLicenseManager
!insertmacro MUI_PAGE_FINISH
!define MUI_COMPONENTSPAGE_TEXT_TOP "${PRODUCT} will be removed from this computer, and the license program with its agent when no other product of ${COMPANY} uses it. Choose what else to do."
!define MUI_COMPONENTSPAGE_TEXT_COMPLIST "Also:"
!define MUI_COMPONENTSPAGE_SMALLDESC
!insertmacro MUI_UNPAGE_COMPONENTS
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

; The manager opens the browser itself and stops by itself once no page is open.
Function OpenLicenseManager
  ExecShell "open" "${PROGRAM}" '${APP_ARGS} manager' SW_HIDE
FunctionEnd

; ------------------------------------------------------------------------------------- helpers

; Stops with a message the musician can act on (no window in silent mode), exit code 2.
!macro Fail TEXT
  DetailPrint "${TEXT}"
  MessageBox MB_ICONSTOP|MB_OK "${TEXT}" /SD IDOK
  SetErrorLevel 2
  Abort
!macroend

; Runs the program with ARGS, hidden; $0 = exit code, $1 = what it printed.
!macro Program ARGS
  nsExec::ExecToStack '"${PROGRAM}" ${APP_ARGS} ${ARGS}'
  Pop $0
  Pop $1
!macroend

; Drops the line ends the program printed after a path.
!macro TrimLine VAR
  ${Do}
    StrCpy $R9 ${VAR} 1 -1
    ${If} $R9 == "$\r"
    ${OrIf} $R9 == "$\n"
      StrCpy ${VAR} ${VAR} -1
    ${Else}
      ${Break}
    ${EndIf}
  ${Loop}
!macroend

; Asks up to TRIES times, 0.2 s apart, whether the agent answers; $0 = 0 when it does.
!macro WaitForAgent TRIES
  StrCpy $2 0
  ${Do}
    !insertmacro Program "agent status"
    ${If} $0 == 0
      ${Break}
    ${EndIf}
    IntOp $2 $2 + 1
    ${If} $2 >= ${TRIES}
      ${Break}
    ${EndIf}
    Sleep 200
  ${Loop}
!macroend

; ------------------------------------------------------------------------------------- install

Section "Install"
  SetShellVarContext current
  SetOverwrite on
  CreateDirectory "$INSTDIR"
  ClearErrors
  SetOutPath "$INSTDIR"

  ; 1. The new program beside the installed one; it must run before anything else changes.
  File "/oname=$INSTDIR\${NAME}.new.exe" "${EXE}"
  ${If} ${Errors}
    Delete "$INSTDIR\${NAME}.new.exe"
    !insertmacro Fail "${PRODUCT} could not be copied into $INSTDIR (is the disk full?). Nothing was changed."
  ${EndIf}
  nsExec::ExecToStack '"$INSTDIR\${NAME}.new.exe" --version'
  Pop $0
  Pop $1
  ${If} $0 != 0
    Delete "$INSTDIR\${NAME}.new.exe"
    !insertmacro Fail "${PRODUCT} does not start on this computer ($1). Download the installer again. Nothing was changed."
  ${EndIf}

  ; 2. The service address, as every tool and the agent read it (never a token).
  !if "${BASE_URL}" != ""
    nsExec::ExecToStack '"$INSTDIR\${NAME}.new.exe" ${APP_ARGS} config set base_url "${BASE_URL}"'
    Pop $0
    Pop $1
    ${If} $0 != 0
      Delete "$INSTDIR\${NAME}.new.exe"
      !insertmacro Fail "The service address could not be saved: $1 Nothing was changed."
    ${EndIf}
  !endif

  ; 3. Windows does not let a running program be replaced, only renamed: the installed one (maybe
  ; the running agent) moves aside, the new one takes its name. Plugins see the agent "not
  ; running" from here until the new one answers, a few seconds.
  Delete "$INSTDIR\${NAME}.old-*.exe"
  ${If} ${FileExists} "${PROGRAM}"
    ${GetTime} "" "LS" $R0 $R1 $R2 $R3 $R4 $R5 $R6
    StrCpy $R7 "$INSTDIR\${NAME}.old-$R2$R1$R0$R4$R5$R6.exe"
    ClearErrors
    Rename "${PROGRAM}" "$R7"
    ${If} ${Errors}
      Delete "$INSTDIR\${NAME}.new.exe"
      !insertmacro Fail "The installed ${PRODUCT} could not be moved aside (another program holds it?). Close your music software and run the installer again; the previous install is unchanged."
    ${EndIf}
  ${EndIf}
  ClearErrors
  Rename "$INSTDIR\${NAME}.new.exe" "${PROGRAM}"
  ${If} ${Errors}
    Rename "$R7" "${PROGRAM}"
    !insertmacro Fail "${PRODUCT} could not be put in place in $INSTDIR. The previous install is unchanged; run the installer again."
  ${EndIf}

  ; 4. The old agent stops, however it was started (its task, a plugin, the program): asked over
  ; its pipe first (`agent stop`: it finishes what it is doing), then any agent process left (an
  ; older one, one that does not answer). No agent stays resident by default: plugins and the
  ; program start it when they need it. A logon task only when the vendor packaged with
  ; --agent-at-login.
  !insertmacro Program "agent uninstall"
  !insertmacro Program "agent stop"
  nsExec::ExecToStack 'taskkill /F /IM "${NAME}.exe"'
  Pop $0
  Pop $1
  !if "${AGENT_AT_LOGIN}" == "yes"
    !insertmacro Program "agent install"
    ; Task Scheduler starts it within a second or two; plugins wait for it meanwhile.
    !insertmacro WaitForAgent 8
    ${If} $0 != 0
      ; The logon task did not start it now (Task Scheduler off, or Wine): start it directly. Should
      ; the task start one after all, that second agent finds the pipe served and exits. It stays
      ; (--idle-exit-minutes 0), as the task's would: the vendor asked for a resident agent.
      ExecShell "open" "${PROGRAM}" '${APP_ARGS} agent run --idle-exit-minutes 0' SW_HIDE
      !insertmacro WaitForAgent 50
    ${EndIf}
    ${If} $0 != 0
      DetailPrint "The license agent did not answer yet; it starts at your next sign-in."
    ${EndIf}
  !endif

  ; 5. The uninstaller, and the entry in Settings > Apps (per user).
  WriteUninstaller "${UNINSTALLER}"
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayName" "${PRODUCT}"
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINST_KEY}" "Publisher" "${COMPANY}"
  WriteRegStr HKCU "${UNINST_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayIcon" "${PROGRAM}"
  WriteRegStr HKCU "${UNINST_KEY}" "UninstallString" '"${UNINSTALLER}"'
  WriteRegStr HKCU "${UNINST_KEY}" "QuietUninstallString" '"${UNINSTALLER}" /S'
  WriteRegDWORD HKCU "${UNINST_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINST_KEY}" "NoRepair" 1

  ; 6. This product's plugins, placed by the program (one implementation for every installer): each
  ; into its format's per-user folder, replaced whole, recorded beside the program as this
  ; product's (a product without plugins is recorded too: the program stays while one is). Its
  ; lines (where each went, which hosts may need a rescan) go to the details, as DetailPrint would,
  ; and to install.log beside the program: /S shows nothing, so that file is silent mode's record.
  !ifdef PLUGINS
    InitPluginsDir
    SetOutPath "$PLUGINSDIR\plugins"
    File /r "${PLUGINS}/*"
    SetOutPath "$INSTDIR"
    nsExec::ExecToLog '"${PROGRAM}" plugins install --product-id ${PRODUCT_ID} --from "$PLUGINSDIR\plugins" --log "$INSTDIR\install.log"'
  !else
    nsExec::ExecToLog '"${PROGRAM}" plugins install --product-id ${PRODUCT_ID} --log "$INSTDIR\install.log"'
  !endif
  Pop $0
  ${If} $0 != 0
    !insertmacro Fail "Your plugins could not be installed ($0; the lines above say why). ${PRODUCT} itself is installed. Close your music software and run the installer again."
  ${EndIf}
  !ifdef PLUGINS
    !insertmacro PluginShortcuts
  !endif
  ; An earlier release had one uninstaller and Settings entry for every product. Once the program
  ; has taken its plugins over (installed-plugins.json is gone) they go; while it stays, it still
  ; lists another product's plugins of that release, whose uninstaller it is.
  ${IfNot} ${FileExists} "$INSTDIR\installed-plugins.json"
    Delete "$INSTDIR\uninstall.exe"
    DeleteRegKey HKCU "${LEGACY_UNINST_KEY}"
  ${EndIf}
SectionEnd

; ------------------------------------------------------------------------------------- uninstall

Var Folders

Section /o "un.Give activations back" SEC_RELEASE
  ; First, while everything is in place: the agent records each release before it asks the service.
  ; Only this product's, while another product of the vendor is installed (the program decides).
  !insertmacro Program "deactivate --all --product-id ${PRODUCT_ID}"
  ${If} $0 != 0
    !insertmacro Fail "Your activations could not be given back: $1 Nothing was removed. Connect to the internet and try again, or uninstall without giving them back."
  ${EndIf}
  DetailPrint "$1"
SectionEnd

Section /o "un.Remove license data" SEC_PURGE
  ; Where they are, asked before the program goes.
  StrCpy $Folders ""
  !insertmacro Program "config path --folder data"
  ${If} $0 == 0
    StrCpy $Folders "$1"
  ${EndIf}
SectionEnd

Section "-un.Remove"
  SetShellVarContext current
  !insertmacro Program "config path --folder config"
  StrCpy $3 $1
  !insertmacro Program "config path --folder log"
  StrCpy $4 $1
  !insertmacro Program "config path --folder cache"
  StrCpy $5 $1
  ; This product's plugins, as the program recorded them, removed while it is still here (only what
  ; it put there, is unchanged since and no other product installed too; it says which it left).
  ; A failure stops here with nothing else removed.
  nsExec::ExecToLog '"${PROGRAM}" plugins uninstall --product-id ${PRODUCT_ID}'
  Pop $0
  ${If} $0 != 0
    !insertmacro Fail "Your plugins could not be removed ($0; the lines above say why). Nothing else was removed. Close your music software and run the uninstaller again."
  ${EndIf}
  !ifdef PLUGINS
    !insertmacro RemovePluginShortcuts
  !endif
  ; Other products of the vendor still installed share the program, its agent and the license
  ; data: then only this product's uninstaller and entry go.
  !insertmacro Program "plugins products"
  ${If} $0 != 0
    !insertmacro Fail "The program could not say which products remain ($1). This product's plugins are removed; the program is kept."
  ${EndIf}
  ${If} $1 != ""
    Delete "${UNINSTALLER}"
    DeleteRegKey HKCU "${UNINST_KEY}"
    DetailPrint "${PRODUCT} is removed. The license program and your licenses stay, for: $1"
    Goto removed
  ${EndIf}
  ; The last product: the license managers (a page in the browser: one would start the agent
  ; again), then the agent, however it was started: asked over its pipe, then whatever is left.
  !insertmacro Program "agent uninstall"
  !insertmacro Program "manager stop"
  !insertmacro Program "agent stop"
  nsExec::ExecToStack 'taskkill /F /IM "${NAME}.exe"'
  Pop $0
  Pop $1
  Sleep 500
  Delete "${PROGRAM}"
  Delete "$INSTDIR\${NAME}.old-*.exe"
  Delete "$INSTDIR\${NAME}.new.exe"
  Delete "${UNINSTALLER}"
  ; The earlier release's uninstaller and emptied record go with the last product.
  Delete "$INSTDIR\uninstall.exe"
  Delete "$INSTDIR\installed-plugins.json"
  Delete "$INSTDIR\install.log"
  RMDir "$INSTDIR\installed-plugins"
  RMDir "$INSTDIR"
  DeleteRegKey HKCU "${UNINST_KEY}"
  DeleteRegKey HKCU "${LEGACY_UNINST_KEY}"
  ${If} $Folders != ""
    ; config path prints one line: drop the line end.
    !insertmacro TrimLine $Folders
    !insertmacro TrimLine $3
    !insertmacro TrimLine $4
    !insertmacro TrimLine $5
    RMDir /r "$Folders"
    RMDir /r "$3"
    RMDir /r "$4"
    RMDir /r "$5"
    DetailPrint "${PRODUCT} is removed, with its license data and settings."
  ${Else}
    DetailPrint "${PRODUCT} is removed. Its license data is kept, so a reinstall finds your licenses again."
  ${EndIf}
  removed:
SectionEnd

!insertmacro MUI_UNFUNCTION_DESCRIPTION_BEGIN
  !insertmacro MUI_DESCRIPTION_TEXT ${SEC_RELEASE} "Free this computer's activations so another computer can use them (needs the internet). Nothing is removed if that fails."
  !insertmacro MUI_DESCRIPTION_TEXT ${SEC_PURGE} "Also delete your licenses and settings. Keep them to reinstall later without activating again."
!insertmacro MUI_UNFUNCTION_DESCRIPTION_END

Function un.onInit
  ${GetParameters} $R0
  ClearErrors
  ${GetOptions} $R0 "/RELEASE=" $R1
  ${IfNot} ${Errors}
  ${AndIf} $R1 == "1"
    SectionSetFlags ${SEC_RELEASE} ${SF_SELECTED}
  ${EndIf}
  ClearErrors
  ${GetOptions} $R0 "/PURGE=" $R1
  ${IfNot} ${Errors}
  ${AndIf} $R1 == "1"
    SectionSetFlags ${SEC_PURGE} ${SF_SELECTED}
  ${EndIf}
FunctionEnd
