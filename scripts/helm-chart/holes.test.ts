import { escapeActions, Holes } from './holes.js';

describe('Holes', () => {
  it('fills scalars, blocks, optional entries and ranges at the indentation YAML gave them', () => {
    const h = new Holes();
    const pod = {
      spec: {
        replicas: h.scalar('$.Values.replicas'),
        containers: [
          {
            name: 'c',
            args: [
              '--fixed',
              h.scalar('printf "--zone=%v" $.Values.zone | quote'),
              h.rangeItems('$.Values.extraArgs'),
            ],
            resources: h.block('$.Values.resources'),
          },
        ],
        [h.optionalBlock('nodeSelector', '$.Values.nodeSelector')]: '',
      },
    };
    expect(h.render(pod)).toBe(
      [
        'spec:',
        '  replicas: {{ $.Values.replicas }}',
        '  containers:',
        '    - name: c',
        '      args:',
        '        - --fixed',
        '        - {{ printf "--zone=%v" $.Values.zone | quote }}',
        '        {{- range $.Values.extraArgs }}',
        '        - {{ . | quote }}',
        '        {{- end }}',
        '      resources:',
        '        {{- toYaml $.Values.resources | nindent 8 }}',
        '  {{- with $.Values.nodeSelector }}',
        '  nodeSelector:',
        '    {{- toYaml . | nindent 4 }}',
        '  {{- end }}',
        '',
      ].join('\n'),
    );
  });

  it('escapes literal text Helm would take for an action', () => {
    expect(escapeActions('summary: {{ $labels.pod }} down')).toBe(
      'summary: {{ "{{" }} $labels.pod {{ "}}" }} down',
    );
    expect(new Holes().render({ legend: '{{instance}}' })).toBe('legend: "{{ "{{" }}instance{{ "}}" }}"\n');
  });

  it('writes YAML 1.1, as Helm and the API server read it: strings that 1.1 takes for booleans stay quoted', () => {
    expect(new Holes().render({ a: 'on', b: 'y' })).toBe('a: "on"\nb: "y"\n');
  });

  it('refuses a hole used twice, or a block where no key stands', () => {
    const h = new Holes();
    const s = h.scalar('x');
    expect(() => h.render({ a: s, b: s })).toThrow(/appears twice/);
    const b = h.block('y');
    expect(() => h.render({ list: [b] })).toThrow(/not where one can stand/);
  });
});
