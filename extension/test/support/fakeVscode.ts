/**
 * A small test double of the parts of the VS Code API the extension uses (see src/vscodeApi.ts).
 * It records what the code under test does (decorations set, status bar text, commands executed) and
 * lets tests fire editor events. Only behaviour the extension relies on is modelled.
 */
import type * as vscode from 'vscode';
import type { VsCode } from '../../src/vscodeApi';

type Listener<T> = (e: T) => unknown;

export class FakeEventEmitter<T> {
  private listeners: Listener<T>[] = [];
  readonly event = (listener: Listener<T>): { dispose(): void } => {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  };
  fire(value: T): void {
    for (const l of [...this.listeners]) l(value);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class FakePosition {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class FakeRange {
  readonly start: FakePosition;
  readonly end: FakePosition;
  constructor(a: number | FakePosition, b: number | FakePosition, c?: number, d?: number) {
    if (typeof a === 'number' && typeof b === 'number') {
      this.start = new FakePosition(a, b);
      this.end = new FakePosition(c ?? a, d ?? b);
    } else {
      this.start = a as FakePosition;
      this.end = b as FakePosition;
    }
  }
}

export class FakeSelection extends FakeRange {
  readonly active: FakePosition;
  constructor(anchor: FakePosition, active: FakePosition) {
    super(anchor, active);
    this.active = active;
  }
}

export class FakeMarkdownString {
  constructor(readonly value: string = '') {}
}

export class FakeHover {
  constructor(readonly contents: FakeMarkdownString) {}
}

export interface FakeDecorationType {
  key: string;
  options: vscode.DecorationRenderOptions;
  disposed: boolean;
  dispose(): void;
}

/** A WorkspaceEdit that records its edits (applied by FakeVsCode.applyEdit to the recorded list only). */
export class FakeWorkspaceEdit {
  readonly edits: { uri: string; range: FakeRange; text: string }[] = [];
  insert(uri: { toString(): string }, at: FakePosition, text: string): void {
    this.edits.push({ uri: uri.toString(), range: new FakeRange(at.line, at.character, at.line, at.character), text });
  }
  replace(uri: { toString(): string }, range: FakeRange, text: string): void {
    this.edits.push({ uri: uri.toString(), range, text });
  }
}

export class FakeEditor {
  readonly decorations = new Map<FakeDecorationType, (FakeRange | vscode.DecorationOptions)[]>();
  selection = new FakeSelection(new FakePosition(0, 0), new FakePosition(0, 0));
  revealed: FakeRange[] = [];
  /** What is on screen: the first 40 lines unless a test scrolls. */
  visibleRanges: FakeRange[];
  readonly document: {
    uri: { toString(): string; fsPath: string };
    lineCount: number;
    languageId: string;
    getText(): string;
    lineAt(line: number): { text: string };
    isDirty: boolean;
    /** VS Code's version of the document: a test bumps it to stand for an edit. */
    version: number;
    save(): Promise<boolean>;
  };

  constructor(uri: string, text: string) {
    this.document = {
      uri: { toString: () => uri, fsPath: uri.replace(/^file:\/\//, '') },
      lineCount: text.split('\n').length,
      languageId: 'python',
      getText: () => text,
      // the text as constructed (edits are fired, not applied): a change's prefix on its line is the same
      lineAt: (line: number) => ({ text: text.split('\n')[line] ?? '' }),
      isDirty: false,
      version: 1,
      save: () => Promise.resolve(true),
    };
    this.visibleRanges = [new FakeRange(0, 0, Math.min(this.document.lineCount, 40) - 1, 0)];
  }

  setDecorations(type: FakeDecorationType, ranges: (FakeRange | vscode.DecorationOptions)[]): void {
    this.decorations.set(type, ranges);
  }

  revealRange(range: FakeRange): void {
    this.revealed.push(range);
  }

  /** Lines decorated with `type` (every line a multi-line range covers). */
  linesOf(type: FakeDecorationType): number[] {
    return (this.decorations.get(type) ?? []).flatMap((r) => {
      const range = 'range' in r ? r.range : r;
      return Array.from({ length: range.end.line - range.start.line + 1 }, (_, i) => range.start.line + i);
    });
  }
}

export interface FakeStatusBarItem {
  text: string;
  tooltip: unknown;
  command: unknown;
  name: string;
  visible: boolean;
  show(): void;
  hide(): void;
  dispose(): void;
}

export class FakeVsCode {
  readonly decorationTypes: FakeDecorationType[] = [];
  readonly statusItems: FakeStatusBarItem[] = [];
  readonly executed: unknown[][] = [];
  readonly registered: string[] = [];
  readonly messages: string[] = [];
  readonly errors: string[] = [];
  /** The button a test "clicks" on the next error messages (undefined: dismissed). */
  errorAnswer: string | undefined;
  /** Each warning shown, with its buttons; the button the "user" picks. */
  readonly warnings: string[][] = [];
  readonly openDialogs: vscode.OpenDialogOptions[] = [];
  openDialogAnswer: { toString(): string }[] | undefined;
  warningAnswer: string | undefined;
  readonly hoverProviders: vscode.HoverProvider[] = [];
  readonly config = new Map<string, unknown>();
  readonly statusMessages: string[] = [];
  readonly configUpdates: [string, unknown][] = [];
  visibleTextEditors: FakeEditor[] = [];
  activeTextEditor: FakeEditor | undefined;
  isTrusted = true;
  quickPickAnswer: ((items: readonly unknown[]) => unknown) | undefined;
  /** Each input box shown; the answer the "user" types (undefined: Escape). */
  readonly inputBoxes: vscode.InputBoxOptions[] = [];
  inputBoxAnswer: ((options: vscode.InputBoxOptions) => string | undefined) | undefined;
  /** The edits applied through workspace.applyEdit. */
  readonly appliedEdits: FakeWorkspaceEdit[] = [];
  textDocuments: FakeEditor['document'][] = [];

  readonly visibleEditorsChanged = new FakeEventEmitter<FakeEditor[]>();
  readonly activeEditorChanged = new FakeEventEmitter<FakeEditor | undefined>();
  readonly visibleRangesChanged = new FakeEventEmitter<{ textEditor: FakeEditor; visibleRanges: FakeRange[] }>();
  readonly documentChanged = new FakeEventEmitter<vscode.TextDocumentChangeEvent>();
  readonly configurationChanged = new FakeEventEmitter<vscode.ConfigurationChangeEvent>();
  readonly trustGranted = new FakeEventEmitter<void>();

  /** The object handed to the code under test, typed as the real wrapper. */
  api(): VsCode {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- live getters below read the double's current state
    const self = this;
    const configuration = {
      get: (key: string) => self.config.get(key),
      update: (key: string, value: unknown) => {
        self.configUpdates.push([key, value]);
        self.config.set(key, value);
        return Promise.resolve();
      },
    };
    const fake = {
      window: {
        createTextEditorDecorationType: (options: vscode.DecorationRenderOptions) => {
          const t: FakeDecorationType = {
            key: `deco${self.decorationTypes.length}`,
            options,
            disposed: false,
            dispose: () => (t.disposed = true),
          };
          self.decorationTypes.push(t);
          return t;
        },
        createStatusBarItem: () => {
          const item: FakeStatusBarItem = {
            text: '',
            tooltip: undefined,
            command: undefined,
            name: '',
            visible: false,
            show: () => (item.visible = true),
            hide: () => (item.visible = false),
            dispose: () => undefined,
          };
          self.statusItems.push(item);
          return item;
        },
        showInformationMessage: (m: string) => {
          self.messages.push(m);
          return Promise.resolve(undefined);
        },
        setStatusBarMessage: (m: string) => {
          self.statusMessages.push(m);
          return { dispose: () => undefined };
        },
        showWarningMessage: (m: string, ...buttons: string[]) => {
          self.warnings.push([m, ...buttons]);
          return Promise.resolve(self.warningAnswer);
        },
        showErrorMessage: (m: string) => {
          self.errors.push(m);
          return Promise.resolve(self.errorAnswer);
        },
        showQuickPick: (items: readonly unknown[]) => Promise.resolve(self.quickPickAnswer?.(items)),
        showInputBox: (options: vscode.InputBoxOptions) => {
          self.inputBoxes.push(options);
          return Promise.resolve(self.inputBoxAnswer?.(options));
        },
        showTextDocument: () => Promise.resolve(undefined),
        showOpenDialog: (options: vscode.OpenDialogOptions) => {
          self.openDialogs.push(options);
          return Promise.resolve(self.openDialogAnswer);
        },
        onDidChangeVisibleTextEditors: self.visibleEditorsChanged.event,
        onDidChangeActiveTextEditor: self.activeEditorChanged.event,
        onDidChangeTextEditorVisibleRanges: self.visibleRangesChanged.event,
        get visibleTextEditors() {
          return self.visibleTextEditors;
        },
        get activeTextEditor() {
          return self.activeTextEditor;
        },
      },
      workspace: {
        getConfiguration: () => configuration,
        onDidChangeConfiguration: self.configurationChanged.event,
        onDidChangeTextDocument: self.documentChanged.event,
        onDidGrantWorkspaceTrust: self.trustGranted.event,
        get isTrusted() {
          return self.isTrusted;
        },
        workspaceFolders: undefined,
        get textDocuments() {
          return self.textDocuments;
        },
        applyEdit: (edit: FakeWorkspaceEdit) => {
          self.appliedEdits.push(edit);
          return Promise.resolve(true);
        },
      },
      commands: {
        executeCommand: (...args: unknown[]) => {
          self.executed.push(args);
          return Promise.resolve(undefined);
        },
        registerCommand: (id: string) => {
          self.registered.push(id);
          return { dispose: () => undefined };
        },
      },
      languages: {
        registerHoverProvider: (_selector: unknown, provider: vscode.HoverProvider) => {
          self.hoverProviders.push(provider);
          return { dispose: () => undefined };
        },
      },
      Uri: { parse: (value: string) => ({ scheme: value.split(':', 1)[0], toString: () => value }) },
      Range: FakeRange,
      Position: FakePosition,
      Selection: FakeSelection,
      WorkspaceEdit: FakeWorkspaceEdit,
      MarkdownString: FakeMarkdownString,
      Hover: FakeHover,
      EventEmitter: FakeEventEmitter,
      StatusBarAlignment: { Left: 1, Right: 2 },
      OverviewRulerLane: { Left: 1, Center: 2, Right: 4, Full: 7 },
      DecorationRangeBehavior: { OpenOpen: 0, ClosedClosed: 1, OpenClosed: 2, ClosedOpen: 3 },
      TextEditorRevealType: { Default: 0, InCenter: 1, InCenterIfOutsideViewport: 2, AtTop: 3 },
      ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
      LanguageStatusSeverity: { Information: 0, Warning: 1, Error: 2 },
    };
    // The double implements only what the extension calls; the cast documents that boundary.
    return fake as unknown as VsCode;
  }

  /** Scroll `editor` so that lines `from`..`to` are on screen. */
  scroll(editor: FakeEditor, from: number, to: number): void {
    editor.visibleRanges = [new FakeRange(from, 0, to, 0)];
    this.visibleRangesChanged.fire({ textEditor: editor, visibleRanges: editor.visibleRanges });
  }

  /** Fire a text change on `editor` replacing [start, end) lines/chars with `text`. */
  edit(editor: FakeEditor, startLine: number, startChar: number, endLine: number, endChar: number, text: string): void {
    this.documentChanged.fire({
      document: editor.document,
      contentChanges: [
        { range: new FakeRange(startLine, startChar, endLine, endChar), text, rangeOffset: 0, rangeLength: 0 },
      ],
      reason: undefined,
    } as unknown as vscode.TextDocumentChangeEvent);
  }
}
