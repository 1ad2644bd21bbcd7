import subprocess,re,sys,json
repo=sys.argv[1]; g=f"/work/.mirror/{repo.replace('/','+')}/repo"
def git(*a): return subprocess.run(['git','--git-dir',g,*a],capture_output=True,text=True,errors='replace').stdout
log=git('log','--no-merges','--format=%H%x00%P%x00%B%x01','-n','20000')
pat=re.compile(r'(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?)\s*:?\s*(?:#|https://github\.com/'+re.escape(repo)+r'/issues/)(\d+)',re.I)
out=[]
for rec in log.split('\x01'):
    rec=rec.strip('\n')
    if not rec: continue
    h,p,msg=rec.split('\x00',2)
    nums=sorted(set(pat.findall(msg)))
    if len(nums)!=1: continue
    ps=p.split()
    if len(ps)!=1: continue
    st=git('diff','--name-status',ps[0],h)
    files=[l.split('\t') for l in st.strip().split('\n') if l]
    src=[f for f in files if f[-1].endswith('.py') and not re.search(r'(^|/)(tests?|testing)/|test_|_test\.py|conftest|docs?/',f[-1])]
    if not src or any(f[0]!='M' for f in src) or len(src)>3: continue
    out.append({'repo':repo,'issue':int(nums[0]),'sha':h,'parent':ps[0],'files':[f[-1] for f in src],'subject':msg.split('\n')[0][:120]})
print(len(out),file=sys.stderr)
for o in out: print(json.dumps(o))
