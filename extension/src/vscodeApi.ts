/**
 * The one module that touches the `vscode` API at run time. Everything else receives a `VsCode` object
 * (and only imports vscode *types*), so unit tests can hand in a small test double instead.
 * The eslint config forbids value imports of 'vscode' outside this file.
 */
import * as vscode from 'vscode';
import type { McpApi } from './mcpServer';

export interface VsCode {
  window: Pick<
    typeof vscode.window,
    | 'createOutputChannel'
    | 'createTextEditorDecorationType'
    | 'createStatusBarItem'
    | 'createWebviewPanel'
    | 'showInformationMessage'
    | 'showWarningMessage'
    | 'showErrorMessage'
    | 'setStatusBarMessage'
    | 'showQuickPick'
    | 'showOpenDialog'
    | 'showInputBox'
    | 'showTextDocument'
    | 'withProgress'
    | 'onDidChangeVisibleTextEditors'
    | 'onDidChangeActiveTextEditor'
    | 'onDidChangeTextEditorVisibleRanges'
    | 'visibleTextEditors'
    | 'activeTextEditor'
  >;
  workspace: Pick<
    typeof vscode.workspace,
    | 'getConfiguration'
    | 'onDidChangeConfiguration'
    | 'onDidChangeTextDocument'
    | 'onDidGrantWorkspaceTrust'
    | 'onDidChangeWorkspaceFolders'
    | 'isTrusted'
    | 'workspaceFolders'
    | 'textDocuments'
    | 'applyEdit'
  >;
  commands: Pick<typeof vscode.commands, 'registerCommand' | 'executeCommand'>;
  languages: Pick<typeof vscode.languages, 'registerHoverProvider' | 'createLanguageStatusItem'>;
  extensions: Pick<typeof vscode.extensions, 'getExtension'>;
  env: Pick<typeof vscode.env, 'openExternal'>;
  Uri: Pick<typeof vscode.Uri, 'file' | 'parse' | 'joinPath'>;
  Range: typeof vscode.Range;
  Position: typeof vscode.Position;
  Selection: typeof vscode.Selection;
  WorkspaceEdit: typeof vscode.WorkspaceEdit;
  ThemeColor: typeof vscode.ThemeColor;
  MarkdownString: typeof vscode.MarkdownString;
  Hover: typeof vscode.Hover;
  EventEmitter: typeof vscode.EventEmitter;
  Disposable: typeof vscode.Disposable;
  LogLevel: typeof vscode.LogLevel;
  StatusBarAlignment: typeof vscode.StatusBarAlignment;
  OverviewRulerLane: typeof vscode.OverviewRulerLane;
  ProgressLocation: typeof vscode.ProgressLocation;
  ViewColumn: typeof vscode.ViewColumn;
  LanguageStatusSeverity: typeof vscode.LanguageStatusSeverity;
  TextEditorRevealType: typeof vscode.TextEditorRevealType;
  DecorationRangeBehavior: typeof vscode.DecorationRangeBehavior;
  ConfigurationTarget: typeof vscode.ConfigurationTarget;
}

/** The real API. Namespaces are passed as-is so live getters (activeTextEditor, isTrusted…) stay live. */
export function realVsCode(): VsCode {
  return {
    window: vscode.window,
    workspace: vscode.workspace,
    commands: vscode.commands,
    languages: vscode.languages,
    extensions: vscode.extensions,
    env: vscode.env,
    Uri: vscode.Uri,
    Range: vscode.Range,
    Position: vscode.Position,
    Selection: vscode.Selection,
    WorkspaceEdit: vscode.WorkspaceEdit,
    ThemeColor: vscode.ThemeColor,
    MarkdownString: vscode.MarkdownString,
    Hover: vscode.Hover,
    EventEmitter: vscode.EventEmitter,
    Disposable: vscode.Disposable,
    LogLevel: vscode.LogLevel,
    StatusBarAlignment: vscode.StatusBarAlignment,
    OverviewRulerLane: vscode.OverviewRulerLane,
    ProgressLocation: vscode.ProgressLocation,
    ViewColumn: vscode.ViewColumn,
    LanguageStatusSeverity: vscode.LanguageStatusSeverity,
    TextEditorRevealType: vscode.TextEditorRevealType,
    DecorationRangeBehavior: vscode.DecorationRangeBehavior,
    ConfigurationTarget: vscode.ConfigurationTarget,
  };
}

/** VS Code's MCP API (>= 1.101), or what an older VS Code has of it (nothing): checked by mcpServer.ts. */
export function realMcpApi(): McpApi {
  const api = vscode as unknown as McpApi;
  return { lm: api.lm, McpStdioServerDefinition: api.McpStdioServerDefinition };
}
